"""Where postflows keeps its data: the default data dir and the run history's URL, found from the values the
settings read (:mod:`core.environment`) without loading the settings model, for commands that need
nothing else (``postflows history`` lists runs in about the time of ``postflows --help``; pydantic-settings
alone would cost half of that).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from core import environment


def default_data_dir() -> Path:
    """The user's data directory for postflows (``~/.local/share/postflows`` on Linux): the same for the CLI,
    ``postflows serve`` and workers of one user, wherever they are started."""
    import platformdirs

    return Path(platformdirs.user_data_dir("postflows", appauthor=False))


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``Settings().data_dir``: ``POSTFLOWS_DATA_DIR``, else :func:`default_data_dir`, from the environment
    (default: the process's) over ``.env``."""
    given = environment.value("data_dir", environ)
    return default_data_dir() if given is None else Path(given)


def sqlite_history_url(data_dir: Path) -> str:
    """The default history: SQLite in the data dir."""
    return f"sqlite:///{(data_dir / 'history.db').resolve()}"


def history_url(environ: Mapping[str, str] | None = None) -> str:
    """``Settings().effective_database_url``: ``POSTFLOWS_DATABASE_URL``, else SQLite in the data dir, from
    the environment (default: the process's) over ``.env``."""
    if url := environment.value("database_url", environ):
        return url
    return sqlite_history_url(data_dir(environ))
