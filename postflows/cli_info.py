"""``postflows info``: where this machine's postflows keeps its data and where its runs and calls go, without
starting anything (no Prefect import, no request but the local Prefect server's health check). A password in
a URL is shown as ``***`` wherever it stands (user part or query)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from runtime.endpoints import Api
    from runtime.settings import Settings

_APIS: tuple[tuple[Api, str, str], ...] = (
    ("address-service", "address service", "POSTFLOWS_ADDRESS_SERVICE_URL"),
    ("newspaper", "newspaper API", "POSTFLOWS_NEWSPAPER_URL"),
    ("commerce", "commerce API", "POSTFLOWS_COMMERCE_URL"),
)


def info_lines(settings: Settings) -> list[tuple[str, str]]:
    """The facts ``postflows info`` prints, as (label, value) pairs."""
    from postflows.prefect_api import prefect_api
    from runtime.privacy import masked_url

    data_from = (
        "POSTFLOWS_DATA_DIR" if "data_dir" in settings.model_fields_set else "the user's data directory"
    )
    history_from = "POSTFLOWS_DATABASE_URL" if settings.database_url else "SQLite in the data dir"
    history = masked_url(settings.effective_database_url)
    lines = [
        ("data dir", f"{settings.data_dir.resolve()} ({data_from})"),
        ("run history", f"{history} ({history_from})"),
        ("Prefect API", prefect_api(settings.data_dir).describe()),
    ]
    for api, label, variable in _APIS:
        lines.append((label, _endpoint(settings, api, variable)))
    lines.append(("commerce sign-in", _token_store(settings)))
    if settings.credentials_block:
        lines.append(("credentials block", f"{settings.credentials_block!r} fills unset credentials"))
    lines.append(("automations", _automations(settings)))
    return lines


def _automations(settings: Settings) -> str:
    from deployments.automations import automations

    notify = settings.notify_block
    names = ", ".join(automation["name"] for automation in automations("named" if notify else None))
    announced = f"failures announced through {notify!r}" if notify else "POSTFLOWS_NOTIFY_BLOCK unset"
    return f"{names} (`postflows setup` makes them on the Prefect API above; {announced})"


def _endpoint(settings: Settings, api: Api, variable: str) -> str:
    from runtime.endpoints import ConfigurationError, api_url, require_settings
    from runtime.privacy import masked_url

    url = api_url(settings, api)
    if url is None:
        if settings.sandbox is False:
            return f"none: {variable} is not set and POSTFLOWS_SANDBOX=0 refuses the embedded sandbox"
        return f"sandbox (embedded; {variable} is not set)"
    url = masked_url(url)
    try:
        require_settings(settings, api, block_may_fill=bool(settings.credentials_block))
    except ConfigurationError as error:
        return f"real: {url} — not usable: {error}"
    return f"real: {url}"


def _token_store(settings: Settings) -> str:
    from runtime.endpoints import ConfigurationError
    from runtime.wiring import commerce_token_store

    try:
        return commerce_token_store(settings).where
    except ConfigurationError as error:
        return f"not usable: {error}"


def info_command() -> None:
    """Print the data dir, the run history, the Prefect API and where each API's calls go (real, sandbox)."""
    from runtime.settings import Settings

    lines = info_lines(Settings())
    width = max(len(label) for label, _ in lines) + 2
    for label, value in lines:
        typer.echo(f"{label + ':':<{width}}{value}")


def register(app: typer.Typer) -> None:
    """Add ``postflows info`` to the command."""
    app.command("info")(info_command)
