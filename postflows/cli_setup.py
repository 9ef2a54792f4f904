"""``postflows setup``: prepare the Prefect server for the flows; today the per-API rate limits.
:func:`register` adds the command to ``postflows``."""

from __future__ import annotations

import typer

from postflows.cli_common import run_work, say


def setup_command() -> None:
    """Create the rate limits address-service, newspaper-api and commerce-api on the Prefect server
    (PREFECT_API_URL), or bring them to the configured values."""
    from prefect.settings import PREFECT_API_URL

    from postflows.api_limits import ensure_api_limits
    from postflows.settings import get_settings

    settings = get_settings()
    say(f"Prefect API: {PREFECT_API_URL.value() or 'the local Prefect database (temporary server)'}")
    limits = run_work(lambda: ensure_api_limits(settings), progress=False)
    for limit in limits:
        typer.echo(
            f"rate limit {limit.name}: {limit.per_minute} requests per minute "
            f"(burst {limit.burst}, {limit.slot_decay_per_second:.2f} slots/s)"
        )
    if not limits:
        typer.echo("no rate limits configured (every POSTFLOWS_*_RATE_PER_MINUTE is 0)")


def register(app: typer.Typer) -> None:
    """Add ``setup`` to ``app``."""
    app.command("setup")(setup_command)
