"""Errors of the file layer: an input file that cannot be used, a downloaded result that cannot be read (or
that is over a limit on what is read).

All are ``PostflowsError`` (core/errors.py) but never ``ApiError``: retrying will not fix a file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.errors import PostflowsError


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


class ResultUnreadable(ResultFileError):
    """A downloaded result or moves file is over a limit on what is read (columns per row, bytes per line,
    rows): it is kept as downloaded and never parsed. ``setting`` names the limit and ``limit`` is its value
    then; :meth:`record` and :meth:`recorded` carry the refusal through the run history, so that a re-run
    under the same limits says so at once."""

    def __init__(self, problem: str, *, path: Path | str, setting: str, limit: int) -> None:
        super().__init__(problem, path=path)
        self.setting = setting
        self.limit = limit

    def record(self) -> dict[str, str | int]:
        """What the run history keeps of the refusal."""
        return {"path": str(self.path), "problem": self.problem, "setting": self.setting, "limit": self.limit}

    @classmethod
    def recorded(cls, record: Mapping[str, Any], *, note: str = "") -> ResultUnreadable:
        """The refusal as :meth:`record` kept it, ``note`` appended to its problem."""
        return cls(
            str(record["problem"]) + note,
            path=str(record["path"]),
            setting=str(record["setting"]),
            limit=int(record["limit"]),
        )


class DuplicateRecordIds(ResultFileError):
    """A result file answers some record ids more than once: which answer belongs to the row is unknown."""

    SHOWN = 10

    def __init__(self, ids: Sequence[int], *, path: Path | str) -> None:
        shown = ", ".join(str(record_id) for record_id in ids[: self.SHOWN])
        more = f" and {len(ids) - self.SHOWN} more" if len(ids) > self.SHOWN else ""
        super().__init__(f"the result holds more than one row for record ids {shown}{more}", path=path)
        self.ids = tuple(ids)
