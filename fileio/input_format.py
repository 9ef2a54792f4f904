"""How a customer's table file is read where detection is not enough (:class:`InputFormat`): the one value
that carries a separator, an encoding, a worksheet and fixed widths from a request down to the reader."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class InputFormat:
    """How to read the user's file when detection is not enough; all None: everything detected.

    Its text (``repr``) is part of the work key of the address flows (``input_format`` in their identity),
    so its name and fields stay as they are: a renamed field would give the same work another key.

    Attributes:
        delimiter: field separator of a .csv/.txt file (sniffed from the header line when None).
        encoding: its encoding (BOM/UTF-8, else Windows-1252 when None).
        sheet: the worksheet of an .xlsx file, by name or 0-based index as text (the first whose header
            fits when None: :func:`fileio.sheet_choice.choose_sheet`).
        fixed_widths: (column name, width) pairs of a fixed-width .txt file, in column order.
    """

    delimiter: str | None = None
    encoding: str | None = None
    sheet: str | None = None
    fixed_widths: tuple[tuple[str, int], ...] | None = None

    @classmethod
    def of(
        cls,
        *,
        delimiter: str | None = None,
        encoding: str | None = None,
        sheet: str | None = None,
        fixed_widths: Mapping[str, int] | None = None,
    ) -> InputFormat:
        """From request fields, where fixed widths come as an ordered name → width mapping (empty: none)."""
        widths = tuple(fixed_widths.items()) if fixed_widths else None
        return cls(delimiter=delimiter, encoding=encoding, sheet=sheet, fixed_widths=widths)


DETECTED = InputFormat()
"""Nothing given: the separator, the encoding and the worksheet detected, no fixed widths."""
