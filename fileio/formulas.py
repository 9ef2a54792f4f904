"""What a spreadsheet runs as a formula, and the mark that makes it text: one test for the CSV files' guard
(:func:`fileio.reports.neutralise_formulas`) and the write-back's refusal
(:func:`fileio.writeback_policy.formula_refusal`), importable without the writers."""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_GUARD = "'"


def starts_like_formula(text: str) -> bool:
    """Whether a spreadsheet would run ``text`` as a formula: it starts with ``=``, ``+``, ``-``, ``@``, a
    tab or a carriage return (:data:`FORMULA_STARTS`)."""
    return text.startswith(FORMULA_STARTS)
