"""Writing a user's table file back: a copy of it (delimited or fixed-width text, or a workbook) with some
cells replaced and everything else as it was, every row in input order; each edit that cannot be made is
left out and said why (:func:`write_back`, :class:`WriteBackOutcome`).
"""

from fileio.source_layout import SourceLayout
from fileio.writeback.outcome import ROW_NOT_MATCHED, Edits, SkippedEdit, WriteBackOutcome
from fileio.writeback.write import write_back

__all__ = ["ROW_NOT_MATCHED", "Edits", "SkippedEdit", "SourceLayout", "WriteBackOutcome", "write_back"]
