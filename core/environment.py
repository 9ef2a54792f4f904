"""Where every ``POSTFLOWS_*`` value comes from: the process environment over the lines of ``.env`` in the
working directory, names in any case. :class:`runtime.settings.Settings` reads its values through
:func:`variables`, and the commands that need one value before (or instead of) the settings model read it
through :func:`value`: no pydantic is imported here, so ``postflows history`` stays as quick as
``postflows --help``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PREFIX = "POSTFLOWS_"
ENV_FILE = Path(".env")


def variables(
    environ: Mapping[str, str] | None = None, *, env_file: Path | None = ENV_FILE
) -> dict[str, str | None]:
    """Every variable of ``environ`` (default: the process's) over every line of ``env_file`` (None: no
    file), by its lower-cased name, as pydantic-settings reads an environment and a ``.env`` file."""
    found: dict[str, str | None] = {}
    if env_file is not None and (env_file.is_file() or env_file.is_fifo()):
        from dotenv import dotenv_values  # the parser pydantic-settings reads .env files with

        found.update((name.lower(), text) for name, text in dotenv_values(env_file, encoding="utf-8").items())
    found.update((name.lower(), text) for name, text in (os.environ if environ is None else environ).items())
    return found


def value(setting: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The text the environment (or ``.env``) gives setting ``setting`` (``data_dir`` is
    ``POSTFLOWS_DATA_DIR``), or None when it gives none."""
    return variables(environ).get(f"{PREFIX}{setting}".lower())


def flag(setting: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether boolean setting ``setting`` is on, read as the settings read a ``bool``."""
    text = value(setting, environ)
    return text is not None and text.strip().lower() in {"1", "true", "yes", "on", "t", "y"}
