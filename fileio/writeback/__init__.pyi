from .outcome import ROW_NOT_MATCHED, Edits, SkippedEdit, WriteBackOutcome
from .write import write_back

__all__ = ["ROW_NOT_MATCHED", "Edits", "SkippedEdit", "WriteBackOutcome", "write_back"]
