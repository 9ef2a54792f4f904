"""``postflows deploy``: the production set-up of a Prefect server in one idempotent command: the work pools,
every deployment of the catalog on its pool (:mod:`deployments.deploy`), the per-API rate limits and the
automations (as ``postflows setup``), then the worker command of each pool; and ``postflows serve``, the same
deployments served from one process, for a laptop or one machine. :func:`register` adds both."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from postflows.cli_common import EXIT_USAGE, fail, run_work, say
from postflows.cli_setup import require_prefect_server, set_up_server

if TYPE_CHECKING:
    from postflows.deploy_settings import Carried
    from runtime.settings import Settings


PoolOption = Annotated[
    str | None,
    typer.Option(
        "--pool",
        metavar="NAME",
        help="Put every deployment on this one work pool [default: one pool per API: address-service, "
        "newspaper, commerce]",
    ),
]
ResetOption = Annotated[
    bool,
    typer.Option(
        "--reset",
        help="Also restore what operators change in the UI: every schedule active, no parameter "
        "defaults but the flow's, the deployment not paused",
    ),
]
DeploySandboxOption = Annotated[
    bool,
    typer.Option(
        "--sandbox",
        help="Let the deployments' runs use the embedded sandbox for a service whose URL is not set "
        "(POSTFLOWS_SANDBOX=1 in their job variables); without it, deploying with no service URL is "
        "refused and a run of a service without its URL fails at its start",
    ),
]
ServeSandboxOption = Annotated[
    bool,
    typer.Option(
        "--sandbox",
        help="Let the runs use the embedded sandbox for a service whose URL is not set (sets "
        "POSTFLOWS_SANDBOX=1 here, which the runs inherit); without it, serving with no service URL is "
        "refused and a run of a service without its URL fails at its start",
    ),
]

WorkerPythonOption = Annotated[
    str | None,
    typer.Option(
        "--worker-python",
        metavar="PATH",
        help="The interpreter of the project's virtual environment on every worker machine, the same path "
        "on each (e.g. /opt/postflows/.venv/bin/python): workers then start each run's Prefect engine "
        "with it directly, one process a run instead of two (about 0.9 s and 0.9 CPU-seconds less a run); "
        "a worker without it fails the runs at their start [default: the worker's own interpreter starts "
        "a workspace supervisor, which starts the engine]",
    ),
]


def deploy_command(
    pool: PoolOption = None,
    reset: ResetOption = False,
    sandbox: DeploySandboxOption = False,
    worker_python: WorkerPythonOption = None,
) -> None:
    """Create the work pools (type process; an existing pool is left as it is), create or update every
    deployment on its pool, the rate limits and the automations on the Prefect server that `postflows info`
    names, then print the worker command of each pool. Workers run the flows from this repository's
    directory. Running it again changes nothing. The code's definition of a deployment (flow, work pool,
    description, tags, concurrency limit, parameter schema, schedules' cron, time zone and parameters,
    triggers) is always brought to the server; a schedule paused or resumed, parameter defaults set or the
    deployment paused in the UI are left as they are (and said) unless --reset is given. The settings
    given here travel with the deployments: the ones not secret (service URLs, users and client ids, paths,
    the history's URL without its password, PREFECT_RUNNER_HEARTBEAT_FREQUENCY) in their job variables, the
    secrets in a Postflows Credentials block they name; a worker needs only PREFECT_API_URL. With
    --worker-python, every deployment's job variable command has the workers start Prefect's engine with
    that interpreter directly (an operator's command set on the server is kept, as other job variables
    are)."""
    from deployments.deploy import (
        engine_command,
        ensure_deployments,
        ensure_work_pools,
        pool_names,
        pools_by_deployment,
    )
    from postflows.deploy_settings import carried_settings

    command = engine_command(_worker_python(worker_python)) if worker_python is not None else None
    require_prefect_server("deploy to")
    carried = carried_settings(_deployable_settings(sandbox), sandbox=sandbox)
    pools = pools_by_deployment(pool)
    names = pool_names(pools)
    run_work(lambda: _carry(carried), progress=False)
    for line in carried.lines():
        typer.echo(line)
    for applied in run_work(lambda: ensure_work_pools(names), progress=False):
        typer.echo(applied.line())
    if command is not None:
        typer.echo(f"job variable command of every deployment: {command}")
    deployed = run_work(
        lambda: ensure_deployments(pools, reset=reset, env=carried.env, command=command), progress=False
    )
    for applied in deployed:
        typer.echo(applied.line())
    set_up_server()
    typer.echo(
        "start at least one worker per pool; the deployments carry the settings, it needs PREFECT_API_URL:"
    )
    for name in names:
        typer.echo(f"  prefect worker start --pool {name}")


def _worker_python(path: str) -> str:
    """``--worker-python``'s interpreter: an absolute path; one that exists here must be an executable file
    (the workers' machines may be others). A refusal is one line and exit 2."""
    from runtime.endpoints import ConfigurationError

    given = Path(path)
    if not given.is_absolute():
        problem = (
            f"--worker-python {path}: give the absolute path of the interpreter of the project's virtual "
            "environment on every worker machine, e.g. /opt/postflows/.venv/bin/python"
        )
        fail("refused", ConfigurationError(problem), EXIT_USAGE)
    if given.exists() and not (given.is_file() and os.access(given, os.X_OK)):
        fail("refused", ConfigurationError(f"--worker-python {path}: not an executable file"), EXIT_USAGE)
    return str(given)


def _deployable_settings(sandbox: bool) -> Settings:
    """The settings, when the deployments can run with them (see
    :func:`postflows.deploy_settings.require_deployable`); a refusal is one line and exit 2."""
    from postflows.deploy_settings import require_deployable
    from runtime.endpoints import ConfigurationError
    from runtime.settings import Settings

    settings = Settings()
    try:
        require_deployable(settings, sandbox=sandbox)
    except ConfigurationError as error:
        fail("refused", error, EXIT_USAGE)
    return settings


async def _carry(carried: Carried) -> None:
    """Save the secrets of ``carried`` (a blocking call, in a thread)."""
    from postflows.deploy_settings import carry

    await asyncio.to_thread(carry, carried)


def serve_command(sandbox: ServeSandboxOption = False) -> None:
    """Serve every flow as a deployment of the Prefect server (PREFECT_API_URL, else the local server of
    `postflows server start`) with its schedules, its rate limits and its automations, from this one process:
    for a laptop or one machine. Production uses `postflows deploy` and workers. The runs have this
    process's environment."""
    from deployments.automations import HEARTBEAT_FREQUENCY_S
    from postflows.prefect_api import choose_api

    if sandbox:
        os.environ["POSTFLOWS_SANDBOX"] = "1"
    settings = _deployable_settings(sandbox)

    say(
        "postflows serve runs every deployment in this one process: meant for a laptop or one machine; "
        "in production use `postflows deploy` and a worker per pool (`prefect worker start --pool NAME`)"
    )
    say(choose_api(settings.data_dir))
    # Runs send heartbeats, which the automation that marks silent runs Crashed waits for.
    os.environ.setdefault("PREFECT_RUNNER_HEARTBEAT_FREQUENCY", str(HEARTBEAT_FREQUENCY_S))
    from deployments.serve import serve_all, served_deployments
    from postflows.automations import ensure_configured_automations
    from runtime.api_limits import ensure_configured_limits

    ensure_configured_limits()  # the per-API rate limits the flows' requests take slots of
    ensure_configured_automations()
    served, notes = served_deployments()
    for note in notes:
        say(note)
    say(
        f"serving {len(served)} deployments until stopped (Ctrl-C); run one from the UI or with "
        "`prefect deployment run FLOW/DEPLOYMENT`"
    )
    serve_all(served)


def register(app: typer.Typer) -> None:
    """Add ``deploy`` and ``serve`` to ``app``."""
    app.command("deploy")(deploy_command)
    app.command("serve")(serve_command)
