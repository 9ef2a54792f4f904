"""``postflows setup``: prepare the Prefect server for the flows: the work pools of the catalog (what
``prefect deploy --all`` of ``prefect.yaml`` needs), the per-API rate limits and the automations.
:func:`register` adds the command to ``postflows``; ``postflows deploy`` (:mod:`postflows.cli_deploy`) does
the same through :func:`require_prefect_server` and :func:`set_up_server`, making the pools it deploys to
itself."""

from __future__ import annotations

import typer

from postflows.cli_common import EXIT_USAGE, run_work, say


def require_prefect_server(doing: str) -> None:
    """Refuse (exit 2) unless `postflows info` names a Prefect server that outlives this command; say which
    one it is. ``doing``: what the command would do there, for the refusal (e.g. "set up")."""
    from postflows.prefect_api import choose_api, prefect_api
    from runtime.settings import Settings

    data_dir = Settings().data_dir
    if prefect_api(data_dir).url is None:
        say(
            f"failed: no Prefect server to {doing}: start one with `postflows server start` or set "
            "PREFECT_API_URL (a temporary server would forget everything when this command ends)",
            style="red",
        )
        raise typer.Exit(EXIT_USAGE)
    say(choose_api(data_dir))  # before Prefect is imported: it reads PREFECT_API_URL once


def set_up_server() -> None:
    """Create or update the rate limits and the automations; one line each."""
    from postflows.automations import ensure_automations
    from runtime.api_limits import ensure_api_limits
    from runtime.settings import get_settings

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


def set_up_work_pools() -> None:
    """Create the catalog's work pools missing on the server (type process); one line each."""
    from deployments.deploy import ensure_work_pools, pool_names, pools_by_deployment

    names = pool_names(pools_by_deployment())
    for applied in run_work(lambda: ensure_work_pools(names), progress=False):
        typer.echo(applied.line())


def setup_command() -> None:
    """Create the work pools address-service, newspaper and commerce (type process; an existing pool is left
    as it is), the rate limits address-service, newspaper-api and commerce-api and the automations (crashed
    runs detected and run again once, failures announced) on the Prefect server that `postflows info` names
    (PREFECT_API_URL, else the local server), or bring them to the configured values. Run it before
    `prefect deploy --all`."""
    require_prefect_server("set up")
    set_up_work_pools()
    set_up_server()


def register(app: typer.Typer) -> None:
    """Add ``setup`` to ``app``."""
    app.command("setup")(setup_command)
