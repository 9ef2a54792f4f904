"""``postflows server start|stop|status``: the local Prefect server of the data dir, which flow commands
report to when ``PREFECT_API_URL`` is not set (see :mod:`postflows.prefect_api`)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from postflows.cli_common import EXIT_FAILED, EXIT_USAGE, say
from postflows.prefect_api import configured_api_url
from postflows.prefect_profile import PROFILE, PROFILE_SOURCE, activate, restore
from postflows.prefect_server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    START_TIMEOUT_S,
    LocalServer,
    ServerError,
    answers,
    ui_url,
)

server_app = typer.Typer(
    name="server",
    help="A local Prefect server kept in the data dir; flow commands use it when PREFECT_API_URL is unset.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _server() -> LocalServer:
    from runtime.settings import Settings

    return LocalServer.of(Settings().data_dir)


def _database_url() -> str | None:
    from runtime.settings import Settings

    url = Settings().server_database_url
    return url.get_secret_value() if url is not None else None


def _overridden() -> None:
    configured = configured_api_url()
    if configured is not None and configured[1] != PROFILE_SOURCE:
        url, source = configured
        say(f"note: {source} is set, so flow commands report to {url}, not to this server")


@server_app.command("start")
def start_command(
    port: Annotated[int, typer.Option("--port", help="Port to listen on")] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Interface to bind; with 0.0.0.0 or :: the UI and the links of notifications name this "
            "machine (its host name) unless PREFECT_UI_URL / PREFECT_UI_API_URL say otherwise",
        ),
    ] = DEFAULT_HOST,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for it to answer")
    ] = START_TIMEOUT_S,
) -> None:
    """Start the server in the background (it keeps running after this command) and wait until it answers."""
    server = _server()
    already = server.running()
    try:
        state = server.start(host=host, port=port, timeout=timeout, database_url=_database_url())
    except ServerError as error:
        say(f"failed: {error}", style="red")
        raise typer.Exit(EXIT_USAGE) from None
    verb = "already running" if already is not None else "started"
    typer.echo(f"Prefect server {verb}: {state.api_url} (pid {state.pid})")
    database = "PostgreSQL (POSTFLOWS_SERVER_DATABASE_URL)" if _database_url() else "SQLite database"
    typer.echo(f"UI: {ui_url(os.environ, state.host, state.port)}  home, {database} and log: {server.home}")
    switch = activate(state.api_url, server.home)
    typer.echo(
        f"Prefect profile {PROFILE!r} is active: prefect commands use this server (the profile active "
        f"before, {switch.previous!r}, is active again after `postflows server stop`)"
    )
    if switch.overridden_by is not None:
        say(f"note: PREFECT_PROFILE={switch.overridden_by} is set in this shell and wins over that profile")
    typer.echo(f"Or, for this shell only: export PREFECT_API_URL={state.api_url}")
    _overridden()


@server_app.command("stop")
def stop_command() -> None:
    """Stop the server and everything it started, and make the Prefect profile active before `start` active
    again."""
    server = _server()
    stopped = server.stop()
    restored = restore(server.home)
    if stopped is None:
        typer.echo("no local Prefect server was running")
    else:
        typer.echo(f"Prefect server stopped: {stopped.api_url} (pid {stopped.pid})")
    if restored is not None:
        typer.echo(f"Prefect profile {restored!r} is active again")


@server_app.command("status")
def status_command() -> None:
    """Print the server's address and whether it answers; exit 1 when it does not run or does not answer."""
    server = _server()
    state = server.running()
    if state is None:
        typer.echo(f"no local Prefect server runs for {server.home.parent} (postflows server start)")
        _overridden()
        raise typer.Exit(EXIT_FAILED)
    if not answers(state.api_url):
        typer.echo(
            f"Prefect server: {state.api_url} (pid {state.pid}) does not answer; see {server.log_path}"
        )
        raise typer.Exit(EXIT_FAILED)
    typer.echo(f"Prefect server: {state.api_url} (pid {state.pid}) answers; started {state.started}")
    _overridden()


def register(app: typer.Typer) -> None:
    """Add ``postflows server`` to the command."""
    app.add_typer(server_app, name="server")
