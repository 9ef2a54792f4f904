"""The statistics inbox: where scheduled statistics runs find their files (``<data dir>/inbox/
newspaper-statistics/<AZ|AZA|AZB>/``), the issue calendar beside them, and ``sent/`` for the files sent.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from fileio.files import make_dirs
from fileio.newspaper.intervals import StatisticsInterval

STATISTICS_SUFFIXES = frozenset({".csv", ".xlsx"})
CALENDAR_STEM = "calendar"
SENT = "sent"


def statistics_inbox(data_dir: Path, interval: StatisticsInterval | None) -> Path:
    """The inbox of ``interval`` (the inbox root when there is none)."""
    root = data_dir / "inbox" / "newspaper-statistics"
    return root / interval.value if interval is not None else root


def inbox_files(inbox: Path) -> list[Path]:
    """The statistics files waiting in ``inbox``, oldest first: .csv and .xlsx files other than the
    calendar; sub-directories (``sent/``) and hidden or temporary files are not looked at."""
    files = [
        path
        for path in inbox.iterdir()
        if path.is_file()
        and path.suffix.lower() in STATISTICS_SUFFIXES
        and path.stem.lower() != CALENDAR_STEM
        and not path.name.startswith((".", "~"))
    ]
    return sorted(files, key=lambda path: (path.stat().st_mtime, path.name))


def inbox_calendar(inbox: Path) -> Path | None:
    """``calendar.csv`` or ``calendar.xlsx`` in ``inbox``, when there is one."""
    for suffix in (".csv", ".xlsx"):
        candidate = inbox / f"{CALENDAR_STEM}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def move_to_sent(path: Path, *, now: dt.datetime | None = None) -> Path:
    """Move a sent file into ``sent/`` beside it; a name already there gets the time appended."""
    sent = path.parent / SENT
    make_dirs(sent)
    target = sent / path.name
    if target.exists():
        stamp = (now or dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
        target = sent / f"{path.stem}-{stamp}{path.suffix}"
    return path.replace(target)
