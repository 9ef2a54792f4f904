"""Where postflows keeps its data, found without loading the settings model: the data dir and the run
history's URL as :class:`postflows.settings.Settings` sees them, for commands that need nothing else
(``postflows history`` lists runs in about the time of ``postflows --help``; pydantic-settings alone would
cost half of that).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_FILE = Path(".env")


def default_data_dir() -> Path:
    """The user's data directory for postflows (``~/.local/share/postflows`` on Linux): the same for the CLI,
    ``postflows serve`` and workers of one user, wherever they are started."""
    import platformdirs

    return Path(platformdirs.user_data_dir("postflows", appauthor=False))


def sqlite_history_url(data_dir: Path) -> str:
    """The default history: SQLite in the data dir."""
    return f"sqlite:///{(data_dir / 'history.db').resolve()}"


def history_url(environ: Mapping[str, str] | None = None) -> str:
    """``Settings().effective_database_url``: ``POSTFLOWS_DATABASE_URL``, else SQLite in the data dir.

    Read straight from the environment (names in any case, as the settings read them); when a ``.env``
    file is in the working directory the settings model reads it, so that its rules hold exactly.
    """
    if ENV_FILE.is_file() or ENV_FILE.is_fifo():
        from postflows.settings import Settings

        return Settings().effective_database_url
    values = {name.lower(): value for name, value in (os.environ if environ is None else environ).items()}
    if url := values.get("postflows_database_url"):
        return url
    data_dir = values.get("postflows_data_dir")
    return sqlite_history_url(default_data_dir() if data_dir is None else Path(data_dir))
