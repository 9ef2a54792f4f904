"""The settings ``postflows deploy`` carries to its deployments, so that a worker started with nothing but
``PREFECT_API_URL`` runs them against the services and the history the deploying machine was given.

What a run needs that is not secret goes into the deployments' job variables (``env``, which a process
worker sets in the run's process): every ``POSTFLOWS_*`` setting given (a service URL, a user or client id,
a token or auth address, a path, made absolute; the history's URL without its password), and
``PREFECT_RUNNER_HEARTBEAT_FREQUENCY`` (default 30), without which no run is ever found silent. The secrets
(service passwords and client secrets, the history's password) go into the Postflows Credentials block
(:mod:`runtime.blocks`) that ``POSTFLOWS_CREDENTIALS_BLOCK`` names there, which every run's settings
read (:func:`runtime.settings.get_settings`). No secret is ever in job variables or in what is printed.

Deploying needs a service URL or the sandbox asked for (``--sandbox``): else every run would fail at its
start (:func:`runtime.endpoints.require_sandbox_allowed`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from core.json_text import json_text
from runtime.endpoints import Api, ConfigurationError, api_url, require_settings
from runtime.settings import CREDENTIAL_FIELDS, Settings
from runtime.settings.variables import variable_named

HEARTBEAT = "PREFECT_RUNNER_HEARTBEAT_FREQUENCY"
DEFAULT_HEARTBEAT_S = 30
DEFAULT_BLOCK = "postflows-deployments"
"""The Postflows Credentials block deploy saves secrets into when POSTFLOWS_CREDENTIALS_BLOCK names none."""
APIS: tuple[Api, ...] = ("address-service", "newspaper", "commerce")


@dataclass(frozen=True)
class Carried:
    """What the deployments carry.

    Attributes:
        env: the job variables' ``env`` (nothing secret).
        secrets: credential fields of the block and their values.
        block: the block ``secrets`` go into (None when there are none).
        left_out: the variables given that are not carried, each with why.
    """

    env: dict[str, str]
    secrets: dict[str, SecretStr] = field(default_factory=dict)
    block: str | None = None
    left_out: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """What deploy says of it: names only, never a value of a secret."""
        said = [f"job variables env of every deployment: {', '.join(sorted(self.env))}"]
        if self.secrets:
            names = ", ".join(sorted(self.secrets))
            said.append(f"secrets saved in block postflows-credentials/{self.block}: {names}")
        said += [f"not carried: {why}" for why in self.left_out]
        return said


def require_deployable(settings: Settings, *, sandbox: bool) -> None:
    """Refuse to deploy runs that would all fail at their start: no service URL set and the sandbox not
    asked for; check the settings of each service whose URL is set.

    Raises:
        ConfigurationError: one line naming the URL variables and ``POSTFLOWS_SANDBOX``.
    """
    urls = [variable_named(Settings, group, "url") for group in ("address_service", "newspaper", "commerce")]
    configured = [api for api in APIS if api_url(settings, api) is not None]
    if not configured and not sandbox and settings.sandbox is not True:
        raise ConfigurationError(
            f"no service URL is set ({', '.join(urls)}): every deployment run would fail at its start; set "
            "the URL of each service, or pass --sandbox (POSTFLOWS_SANDBOX=1 in the deployments) to run them "
            "on the embedded sandbox"
        )
    for api in configured:
        require_settings(settings, api, block_may_fill=bool(settings.credentials_block))


def carried_settings(
    settings: Settings, *, sandbox: bool = False, environ: Mapping[str, str] | None = None
) -> Carried:
    """What the deployments carry of ``settings`` (read from ``environ``, default the process's): every
    setting given or not at its default, secrets apart; ``sandbox`` adds ``POSTFLOWS_SANDBOX=1``."""
    from core import environment

    given = environment.variables(environ)
    env: dict[str, str] = {}
    secrets: dict[str, SecretStr] = {}
    left_out: list[str] = []
    for variable in Settings.variables():
        value = variable.of(settings)
        if value is None or (value == variable.default and variable.name.lower() not in given):
            continue
        if isinstance(value, SecretStr):
            if variable.setting in CREDENTIAL_FIELDS:
                secrets[variable.setting] = value
            else:
                left_out.append(f"{variable.name} (a secret the runs do not need)")
            continue
        text = _text(value)
        if variable.path == ("database_url",):
            text, password = _without_password(text)
            if password is not None and settings.database_password is None:
                secrets["database_password"] = password
        elif _has_secret(text):
            left_out.append(f"{variable.name} (its value holds a password)")
            continue
        env[variable.name] = text
    if sandbox:
        env[variable_named(Settings, "sandbox")] = "1"
    block = None
    if secrets:
        block = settings.credentials_block or DEFAULT_BLOCK
        env[variable_named(Settings, "credentials_block")] = block
    heartbeat = (environ if environ is not None else os.environ).get(HEARTBEAT)
    env[HEARTBEAT] = heartbeat or str(DEFAULT_HEARTBEAT_S)
    return Carried(env, secrets, block, tuple(left_out))


def carry(carried: Carried) -> None:
    """Save ``carried``'s secrets into its block (the job variables go with the deployments)."""
    if carried.block is None:
        return
    from runtime.blocks import save_credentials

    save_credentials(carried.block, dict(carried.secrets))


def _text(value: Any) -> str:
    """``value`` as its environment variable spells it; a path made absolute (the runs start elsewhere)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, Path):
        return str(value.expanduser().resolve())
    if isinstance(value, dict | list | tuple):
        return json_text(value, ascii_only=True)
    return str(value)


def _without_password(url: str) -> tuple[str, SecretStr | None]:
    """``url`` without the password of its user part, and that password."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # noqa: BLE001 - not a SQLAlchemy URL: the history refuses it itself
        return url, None
    if not parsed.password:
        return url, None
    return parsed._replace(password=None).render_as_string(hide_password=False), SecretStr(
        str(parsed.password)
    )


def _has_secret(text: str) -> bool:
    from runtime.privacy import url_secrets

    return "://" in text and bool(url_secrets(text))
