"""The options of ``postflows sandbox``, declared once as a model (as the flow commands' options are, see
:mod:`postflows.cli_requests`): the command line's flags and help are read from its fields.

Nothing here imports the sandbox: ``postflows --help`` lists the command without loading it.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

from flows.requests.base import RequestPart, flag, option


class SandboxGuesses(enum.StrEnum):
    """How a served sandbox answers where a specification shows nothing."""

    ours = "ours"
    other = "other"


class SandboxServeOptions(RequestPart):
    """How ``postflows sandbox`` serves the sandbox: where it listens, how its jobs behave, where its state
    and request log go, the alignments it agrees to and how it answers the registered guesses; an option
    not given falls back to its ``POSTFLOWS_SANDBOX_*`` setting."""

    port: Annotated[int, flag("--port")] = option("Port", "Port to listen on", 8080)
    host: Annotated[str, flag("--host")] = option("Host", "Interface to bind", "127.0.0.1")
    faults: Annotated[str | None, flag("--faults")] = option(
        "Fault plan", "Fault plan: JSON/YAML text or file", None
    )
    job_seconds: Annotated[float | None, flag("--job-seconds")] = option(
        "Job seconds", "Duration of batch jobs and purchases", None
    )
    order_statuses: Annotated[str | None, flag("--order-statuses")] = option(
        "Order statuses",
        "Statuses a newspaper order goes through over its job time, comma-separated, e.g. "
        "LOADED,CONTROL,DONE [default: POSTFLOWS_SANDBOX_ORDER_STATUSES, else LOADED: it stays LOADED]",
        None,
    )
    state_dir: Annotated[Path | None, flag("--state-dir")] = option(
        "State folder", "Where orders, jobs and files are kept [default: <data dir>/sandbox]", None
    )
    memory: Annotated[bool, flag("--memory")] = option("In memory", "Keep the state in memory only", False)
    request_log: Annotated[Path | None, flag("--request-log")] = option(
        "Request log",
        "Append every API request to this file as a JSON line (time, method, path, API, status) "
        "[default: POSTFLOWS_SANDBOX_REQUEST_LOG, else none]",
        None,
    )
    alignment: Annotated[list[str] | None, flag("--alignment")] = option(
        "Alignments",
        "KEY=FILE: the alignment agreed for a batch key, a profile YAML file (repeatable) "
        "[default: POSTFLOWS_SANDBOX_ALIGNMENTS]",
        None,
    )
    guesses: Annotated[SandboxGuesses | None, flag("--guesses")] = option(
        "Guesses",
        "ours: answer as the client guesses where a specification shows nothing; other: every registered "
        "guess the other plausible way [default: POSTFLOWS_SANDBOX_GUESSES, else ours]",
        None,
    )
