"""Which of a service's answers a write-back applies to the customer's own file: the one rule both address
flows decide by (:func:`batch_row_certain`, :func:`quality_applied`) and its table for the documentation
(:func:`writeback_rules`). Only a certain correction goes in; every other change is kept as given and listed
in ``writeback-skipped.csv``. A value that starts like a formula never goes in (:func:`formula_refusal`): the
file stays the user's own, and a spreadsheet or CRM importing it would run such a value."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from fileio.formulas import starts_like_formula

Policy = Literal["corrections", "moves", "all", "none"]
"""An address batch's ``--apply``: ``corrections``: the corrections of hits (see :func:`batch_row_certain`);
``moves``: the new address of a person who moved; ``all``: both; ``none``: nothing (an unchanged copy)."""

# --- every write-back

FORMULA_REFUSED = (
    "the service's value starts like a formula (=, +, -, @, a tab or a carriage return): "
    "a spreadsheet would run it"
)
"""Why a value that starts like a formula is left out of a write-back."""


def formula_refusal(value: str) -> str | None:
    """Why ``value`` is never written into the user's file (:data:`FORMULA_REFUSED`), or None when it may
    be: a value that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is refused whatever
    the answer (a house number ``-2`` too), by the same test as the CSV files' guard
    (:func:`fileio.formulas.starts_like_formula`)."""
    return FORMULA_REFUSED if starts_like_formula(value) else None


# --- address-batch (address web service, §2.3 CorrectionType, §2.4 QSTAT)

CORRECTION_QSTATS: tuple[str, ...] = ("1", "2", "3")
"""The hits (person, household, company) whose changed address fields may be corrections."""
MOVE_QSTAT = "4"
"""A relocation hit: its address fields hold the new address, written only with ``--apply moves`` (or all)."""
CORRECTION_REQUIRED = 1
"""The CorrectionType (§2.3) of a row whose address the service says must be corrected."""


def batch_row_certain(qstat: str, correction_type: int | None) -> bool:
    """Whether a batch row's corrections are certain: a hit (QSTAT 1, 2 or 3) whose CorrectionType says a
    correction is required. A CorrectionType of 0 ("no correction required"), none at all, or any other
    QSTAT leaves the row as given."""
    return qstat in CORRECTION_QSTATS and correction_type == CORRECTION_REQUIRED


def batch_answer(qstat: str, correction_type: int | None) -> str:
    """How ``writeback-skipped.csv`` names a batch row's answer: ``QSTAT 1, CorrectionType 0``."""
    kind = "none" if correction_type is None else str(correction_type)
    return f"QSTAT {qstat or 'none'}, CorrectionType {kind}"


# --- address-validation (commerce API, §2.3 quality)

CERTIFIED = "CERTIFIED"
"""The one quality whose address is applied without being asked for (the only value §2.3 shows)."""
FurtherQuality = Literal["USUALLY_CERTIFIED", "DOMICILE_UNKNOWN", "UNUSABLE", "UNKNOWN"]
"""The qualities an address validation's ``--apply`` may name besides CERTIFIED (§2.3 shows only CERTIFIED;
these are the others the service is known to answer). A quality not named, or one we do not know, keeps
its row as given."""
FURTHER_QUALITIES: tuple[str, ...] = get_args(FurtherQuality)


def quality_applied(quality: str | None, further: Collection[str] = ()) -> bool:
    """Whether an answer of ``quality`` is written back: CERTIFIED always, the ``further`` qualities named
    with ``--apply``; no quality never."""
    return quality is not None and (quality == CERTIFIED or quality in further)


def validation_answer(quality: str | None) -> str:
    """How ``writeback-skipped.csv`` names a validation row's answer: its quality."""
    return quality or "no quality"


# --- the table the documentation shows

KEPT = "kept as given, listed in `writeback-skipped.csv`"
APPLIED = "applied"


@dataclass(frozen=True)
class WriteBackRule:
    """One line of the documentation's table: for ``flow``, an ``answer`` and what the write-back does."""

    flow: str
    answer: str
    outcome: str


def writeback_rules(marks: str) -> tuple[WriteBackRule, ...]:
    """Every answer of both flows and what it writes; ``marks``: the ShortReport characters that make a
    hit's changed field a correction (the setting's default)."""
    hits = ", ".join(CORRECTION_QSTATS)
    batch = "address-batch"
    validation = "address-validation"
    rows: list[WriteBackRule] = [
        WriteBackRule(
            batch,
            f"QSTAT {hits} with CorrectionType {CORRECTION_REQUIRED}: a changed address field whose "
            f"ShortReport character is one of {', '.join(marks)}",
            APPLIED + " (`--apply corrections`, the default, or `all`)",
        ),
        WriteBackRule(
            batch,
            f"QSTAT {hits} with CorrectionType {CORRECTION_REQUIRED}: a changed address field the "
            "ShortReport does not mark as a correction",
            KEPT,
        ),
        WriteBackRule(batch, f"QSTAT {hits} with CorrectionType 0 or none", KEPT),
        WriteBackRule(
            batch,
            f"QSTAT {MOVE_QSTAT} (relocation hit): the new address",
            "applied with `--apply moves` (or `all`); else " + KEPT,
        ),
        WriteBackRule(batch, "any other QSTAT (25, 26, 27, 50, 51, K, F, unknown)", KEPT),
        WriteBackRule(validation, f"quality {CERTIFIED}", APPLIED),
    ]
    rows += [
        WriteBackRule(validation, f"quality {quality}", f"applied with `--apply {quality}`; else {KEPT}")
        for quality in FURTHER_QUALITIES
    ]
    rows.append(WriteBackRule(validation, "any other quality, or none", KEPT))
    formula = "any value that starts with `=`, `+`, `-`, `@`, a tab or a carriage return, whatever the answer"
    rows += [
        WriteBackRule(flow, formula, KEPT + ": it starts like a formula") for flow in (batch, validation)
    ]
    return tuple(rows)


def rules_table(rules: Iterable[WriteBackRule]) -> str:
    """The rules as a Markdown table."""
    lines = ["| Flow | Answer | In `writeback.<ext>` |", "|---|---|---|"]
    lines += [f"| `{rule.flow}` | {rule.answer} | {rule.outcome} |" for rule in rules]
    return "\n".join(lines)
