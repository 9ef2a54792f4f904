"""Errors of the file layer: an input file that cannot be used, a downloaded result that cannot be read.

Both are ``PostflowsError`` (connectors/errors.py) but never ``ApiError``: retrying will not fix a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from connectors.errors import PostflowsError


class InputError(PostflowsError):
    """An input file is unreadable or unusable; the message names the file and, where known, row and field.

    The command's exit code is 2, as for bad usage: running it again with the same file cannot help.
    """

    exit_code = 2

    def __init__(
        self,
        problem: str,
        *,
        path: Path | str,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.row = row
        self.field = field
        self.problem = problem
        where = str(self.path)
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {problem}")


class ResultFileError(InputError):
    """A file downloaded from a service (result or moves file) cannot be read."""

    exit_code = 1


class DuplicateRecordIds(ResultFileError):
    """A result file answers some record ids more than once: which answer belongs to the row is unknown."""

    SHOWN = 10

    def __init__(self, ids: Sequence[int], *, path: Path | str) -> None:
        shown = ", ".join(str(record_id) for record_id in ids[: self.SHOWN])
        more = f" and {len(ids) - self.SHOWN} more" if len(ids) > self.SHOWN else ""
        super().__init__(f"the result holds more than one row for record ids {shown}{more}", path=path)
        self.ids = tuple(ids)
