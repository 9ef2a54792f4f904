"""How the files of a sandbox run (one whose answers come from the embedded sandbox, not from the postal
services) say so: the notice that opens summary.md, the banner sheet that opens each workbook written for
people, and the write-back file's name, which no import into a customer's system takes for the real one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

SANDBOX_NOTICE = (
    "Sandbox run: the answers come from the embedded sandbox, not from the postal services; "
    "nothing here may be imported."
)
SUMMARY_NOTICE = (
    "> **Sandbox run**: the answers come from the embedded sandbox, not from the postal services; "
    "nothing here may be imported."
)
"""The first line of a sandbox run's summary.md (and of its markdown artifact)."""
BANNER_SHEET = "SANDBOX RUN"
"""The first worksheet of a workbook a sandbox run writes for people: its one cell says the notice."""
WRITEBACK_STEM = "writeback"
SANDBOX_WRITEBACK_STEM = "writeback-sandbox"


def banner_frame() -> pd.DataFrame:
    """The banner sheet's table: the notice as its header, no rows."""
    return pd.DataFrame(columns=[SANDBOX_NOTICE])


def with_banner(sheets: dict[str, pd.DataFrame], *, sandbox: bool) -> dict[str, pd.DataFrame]:
    """``sheets`` with the banner sheet first when ``sandbox``; as they are otherwise."""
    return {BANNER_SHEET: banner_frame(), **sheets} if sandbox else sheets


def writeback_name(suffix: str, *, sandbox: bool) -> str:
    """The write-back file's name for an input with this extension (``.csv``): ``writeback-sandbox.csv``
    after a sandbox run, ``writeback.csv`` otherwise."""
    stem = SANDBOX_WRITEBACK_STEM if sandbox else WRITEBACK_STEM
    return f"{stem}{suffix.lower()}"
