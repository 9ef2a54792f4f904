"""``postflows setup``: prepare the Prefect server for the flows: the per-API rate limits and the automations.
:func:`register` adds the command to ``postflows``."""

from __future__ import annotations

import typer

from postflows.cli_common import EXIT_USAGE, run_work, say


def setup_command() -> None:
    """Create the rate limits address-service, newspaper-api and commerce-api and the automations (crashed
    runs detected and run again once, failures announced) on the Prefect server that `postflows info` names
    (PREFECT_API_URL, else the local server), or bring them to the configured values."""
    from postflows.prefect_server import choose_api, prefect_api
    from postflows.settings import Settings

    data_dir = Settings().data_dir
    if prefect_api(data_dir).url is None:
        say(
            "failed: no Prefect server to set up: start one with `postflows server start` or set "
            "PREFECT_API_URL (a temporary server would forget the limits when this command ends)",
            style="red",
        )
        raise typer.Exit(EXIT_USAGE)
    say(choose_api(data_dir))  # before Prefect is imported: it reads PREFECT_API_URL once

    from postflows.api_limits import ensure_api_limits
    from postflows.automations import ensure_automations
    from postflows.settings import get_settings

    settings = get_settings()
    limits = run_work(lambda: ensure_api_limits(settings), progress=False)
    ensured = run_work(lambda: ensure_automations(settings), progress=False)
    for limit in limits:
        typer.echo(
            f"rate limit {limit.name}: {limit.per_minute} requests per minute "
            f"(burst {limit.burst}, {limit.slot_decay_per_second:.2f} slots/s)"
        )
    if not limits:
        typer.echo("no rate limits configured (every POSTFLOWS_*_RATE_PER_MINUTE is 0)")
    for automation in ensured:
        state = "" if automation.enabled else " (switched off on the server: left off)"
        typer.echo(f"automation {automation.name}: {automation.outcome}{state}")
    if not settings.notify_block:
        typer.echo("no failure announcements: POSTFLOWS_NOTIFY_BLOCK names no notification block")


def register(app: typer.Typer) -> None:
    """Add ``setup`` to ``app``."""
    app.command("setup")(setup_command)
