"""What every ``postflows`` sub-command shares: the checks before a flow runs, running a flow with one-line
failures and exit codes, printing the summary, and the options several commands take.

Every line printed here (a reason, a message, the summary) is scrubbed of the registered secrets first.

Exit codes: 0 success; 1 the work failed (the reason on one line); 2 bad usage, configuration, an input
file that cannot be used, input that belongs to other recorded work, or a submission that may have reached
the service and waits for ``--resubmit`` (an error says so with its ``exit_code``); 130 interrupted.
"""

from __future__ import annotations

import shlex
import sqlite3
import sys
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from core.json_text import json_text

if TYPE_CHECKING:
    from flows.results import RunResult
    from runtime.endpoints import Api
    from runtime.settings import Settings

T = TypeVar("T")
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
MAX_REASON = 2000


def prepare_flow_run(
    api: Api | None, *, out: Path | None = None, inputs: Callable[[Settings], object] | None = None
) -> None:
    """What a flow command does before its flow module (and so Prefect) is imported: check the settings of
    ``api``, the input files (``inputs``, given the settings for the limits on them, see
    :mod:`postflows.precheck`; a line it returns is said) and the output directory (created here), then say
    where the calls go and which Prefect server the run reports to (see
    :func:`postflows.prefect_api.choose_api`). A refusal is one line and exit 2.

    Nothing imported here (or by the checks) is heavy: no Prefect, pandas, SQLAlchemy or connector client,
    so a file that cannot be used is refused in about the time of ``postflows --help`` (a test checks it).
    """
    from pydantic import ValidationError

    from core.errors import PostflowsError
    from postflows.precheck import output_dir
    from postflows.prefect_api import choose_api
    from runtime.endpoints import ConfigurationError, describe_endpoint, require_settings
    from runtime.settings import Settings

    try:
        settings = Settings()
        if api is not None:
            require_settings(settings, api, block_may_fill=bool(settings.credentials_block))
        note = inputs(settings) if inputs is not None else None
        output_dir(out)
    except (ConfigurationError, ValidationError) as error:
        fail("configuration error", error, EXIT_USAGE)
    except (PostflowsError, OSError) as error:
        if not _refused(error):
            raise
        fail("refused", error, EXIT_USAGE)
    if api is not None:
        say(describe_endpoint(settings, api))
    if isinstance(note, str):
        say(note)
    say(choose_api(settings.data_dir))


def _refused(error: BaseException) -> bool:
    """Whether a check's error refuses the input: a file or profile that cannot be used, an invalid order, a
    file system error. The error classes are imported here, once one was raised: a newspaper order's
    checks bring their connector along, an address file's do not."""
    from connectors.newspaper.errors import OrderInvalid
    from fileio.address_service.profiles import ProfileError
    from fileio.errors import InputError

    return isinstance(error, InputError | ProfileError | OrderInvalid | OSError)


def run_flow(flow_run: Callable[[], Coroutine[Any, Any, T]], *, progress: bool = True) -> T:
    """Run a flow as :func:`run_work` runs its coroutine, the run's Prefect engine sharing one synchronous
    client (:func:`postflows.prefect_api.shared_sync_client`)."""
    return run_work(flow_run, progress=progress, flow=True)


def run_work(work: Callable[[], Coroutine[Any, Any, T]], *, progress: bool = True, flow: bool = False) -> T:
    """Run a coroutine (``flow``: a flow run, see :func:`run_flow`), turning any failure into a one-line
    reason and a non-zero exit code; an error that carries the run's ``summary`` (rows left for the user to
    confirm) prints it first, as a run that completed does.

    The reason is printed as plain text (server text may hold brackets that look like markup) and never
    wrapped, whatever the terminal's width.
    """
    import asyncio

    from rich.text import Text

    from core.errors import PostflowsError
    from postflows.console import console, progress_bars
    from postflows.prefect_api import shared_sync_client, wait_for_temporary_server
    from runtime.endpoints import ConfigurationError
    from runtime.logsetup import quiet_console_tracebacks

    quiet_console_tracebacks()
    began = _now()
    try:
        wait_for_temporary_server()
        with progress_bars(progress and sys.stderr.isatty()), shared_sync_client() if flow else nullcontext():
            return asyncio.run(work())
    except ConfigurationError as error:
        fail("configuration error", error, EXIT_USAGE)
    except (PostflowsError, ValueError, OSError) as error:
        summary = getattr(error, "summary", None)
        if isinstance(summary, dict):  # a run that ended with rows to confirm still reports what it did
            print_summary(summary)
        fail("failed", error, getattr(error, "exit_code", EXIT_FAILED))
    except KeyboardInterrupt:
        console.print(Text(interrupted_line(began), style="yellow"), soft_wrap=True, overflow="ignore")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except Exception as error:  # noqa: BLE001 - the CLI promises one line, never a traceback
        fail("failed", error, EXIT_FAILED, name=True)


def _now() -> datetime:
    return datetime.now(UTC)


def interrupted_line(began: datetime) -> str:
    """The one line a command ends with after Ctrl-C: what the history recorded of the run this command
    started, and the command that takes it up."""
    again = "postflows " + shlex.join(sys.argv[1:])
    try:
        recorded = _recorded_since(began)
    except Exception:  # noqa: BLE001 - the history cannot be read now; the command still says how to resume
        recorded = None
    if recorded is None:
        return f"interrupted before the run was recorded; nothing was sent. Run again: {again}"
    return f"interrupted: {recorded}. The same command takes it up: {again}"


def _recorded_since(began: datetime) -> str | None:
    """What the history holds of the newest run of this command's flow started since ``began``."""
    import history
    from core.locations import history_url
    from deployments.catalog import CATALOG

    # A command's word, or its group's and its own (``commerce product``).
    commands = {" ".join(sys.argv[1:3]), sys.argv[1]} if len(sys.argv) > 1 else {""}
    flows = {spec.name for spec in CATALOG if commands & {spec.command, spec.name}}
    with history.session_factory(history_url())() as session:
        runs = [run for run in history.list_runs(session, limit=20) if run.started_at >= began]
        run = next((run for run in runs if not flows or run.flow in flows), None)
        if run is None:
            return None
        jobs = [
            f"{job.kind} {job.remote_id} {job.status}"
            for job in run.remote_jobs
            if job.kind not in ("upload-file", "output-file")
        ]
        kept = f" ({', '.join(jobs[:3])})" if jobs else ""
        return f"run {run.id} is recorded {run.state}{kept}"


def fail(label: str, error: BaseException, code: int, *, name: bool = False) -> NoReturn:
    """Print ``label: reason`` on one plain line and exit with ``code``."""
    from rich.text import Text

    from postflows.console import console

    reason = one_line(error)
    if name:
        reason = f"{type(error).__name__}: {reason}"
    console.print(Text.assemble((f"{label}:", "red"), " ", reason), soft_wrap=True, overflow="ignore")
    raise typer.Exit(code) from None


# The packages whose errors mean the history's database cannot be reached or its URL cannot be used.
_DATABASE_PACKAGES = frozenset({"sqlalchemy", "psycopg", "psycopg2", "psycopg_pool"})


@contextmanager
def history_reached(url: str) -> Iterator[None]:
    """Run a block that reads the history at ``url``; a database that cannot be reached or a URL that
    cannot be used (a malformed one) ends the command with one line naming the masked URL, exit 2 as for
    a configuration error, without a traceback."""
    try:
        yield
    except Exception as error:
        if not _database_error(error):
            raise
        from runtime.privacy import URL_MASK, masked_url, url_secrets

        cause = getattr(error, "orig", None) or error
        reason = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        for secret in url_secrets(url):
            reason = reason.replace(secret, URL_MASK)
        problem = f"the run history at {masked_url(url)} cannot be read: {reason}"
        fail("configuration error", RuntimeError(problem), EXIT_USAGE)


def _database_error(error: BaseException) -> bool:
    if isinstance(error, (ValueError, OSError, sqlite3.Error)):
        return True
    return type(error).__module__.partition(".")[0] in _DATABASE_PACKAGES


def say(text: str, *, style: str | None = None) -> None:
    """One plain line on stderr, never read as markup, never wrapped."""
    from rich.text import Text

    from core.redaction import redact
    from postflows.console import console

    console.print(Text(redact(text), style=style or ""), soft_wrap=True, overflow="ignore")


def one_line(error: BaseException) -> str:
    """An error's text on one line without any registered secret, cut at :data:`MAX_REASON` characters."""
    from core.redaction import redact

    text = " ".join(redact(str(error)).split()) or type(error).__name__
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def print_summary(summary: Mapping[str, Any] | RunResult) -> None:
    """The run's result (or summary) as JSON on stdout (progress and messages go to stderr), so it can be
    piped."""
    from core.redaction import redact
    from flows.results import RunResult

    values = summary.summary() if isinstance(summary, RunResult) else dict(summary)
    typer.echo(redact(json_text(values, indent=2, default=str)))
