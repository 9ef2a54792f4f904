"""``postflows sandbox``: the sandbox of the three APIs served over HTTP, with its accounts, state, faults,
alignments and the way it answers the registered guesses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from postflows.cli_common import EXIT_USAGE, fail, say
from postflows.cli_requests import request_command
from postflows.sandbox_options import SandboxServeOptions

if TYPE_CHECKING:
    from runtime.settings import Settings
    from sandbox.address_service.alignments import SandboxAlignment
    from sandbox.config import SandboxConfig


@request_command(SandboxServeOptions)
def sandbox_command(options: SandboxServeOptions) -> None:
    """Serve the sandbox of the APIs over HTTP (address service under /address/REST/v1)."""
    require_sandbox("postflows sandbox")
    import uvicorn

    from runtime.settings import get_settings
    from sandbox.app import create_app

    if options.memory and options.state_dir is not None:
        say("--memory and --state-dir exclude each other", style="red")
        raise typer.Exit(EXIT_USAGE)
    settings = get_settings()
    config = _sandbox_config(options, settings)
    _announce_sandbox(config, options.host, options.port, settings)
    uvicorn.run(create_app(config), host=options.host, port=options.port, log_level="warning")


def _sandbox_config(options: SandboxServeOptions, settings: Settings) -> SandboxConfig:
    """The served sandbox's configuration: each option given, else its setting (the state under the data
    dir unless kept in memory), with every guess answered the other way when ``guesses`` says so."""
    from runtime.wiring import sandbox_state_dir
    from sandbox.config import SandboxConfig, with_other_answers
    from sandbox.faults import FaultPlan

    alignments = _alignments(options.alignment, settings)
    statuses = _order_statuses(options.order_statuses, settings)
    config = SandboxConfig(
        job_seconds=options.job_seconds if options.job_seconds is not None else settings.sandbox_job_seconds,
        order_statuses=statuses,
        faults=FaultPlan.load(options.faults if options.faults is not None else settings.sandbox_faults),
        state_dir=None if options.memory else (options.state_dir or sandbox_state_dir(settings)),
        alignments=alignments,
        listen_host=options.host,
        control_token=settings.sandbox_control_token,
        request_log=options.request_log or settings.sandbox_request_log,
        guesses=options.guesses.value if options.guesses is not None else settings.sandbox_guesses,
        address_ping_answer=settings.sandbox_ping_answer,
    )
    return with_other_answers(config)


def require_sandbox(command: str) -> None:
    """End ``command`` with one line naming ``postflows[sandbox]`` (exit 2) where the sandbox is not
    installed."""
    from runtime.endpoints import sandbox_installed
    from runtime.wiring.embedded import missing_sandbox

    if not sandbox_installed():
        fail("configuration error", missing_sandbox(command), EXIT_USAGE)


def _alignments(given: list[str] | None, settings: Settings) -> dict[str, SandboxAlignment]:
    """The alignments named by ``--alignment`` or the setting; a usage error when one cannot be read."""
    from sandbox.address_service.alignments import AlignmentError, alignments_setting, parse_alignments

    try:
        return parse_alignments(given) if given else alignments_setting(settings.sandbox_alignments)
    except AlignmentError as error:
        say(" ".join(str(error).split()), style="red")
        raise typer.Exit(EXIT_USAGE) from None


def _order_statuses(given: str | None, settings: Settings) -> tuple[str, ...]:
    """The statuses of an order's life from ``--order-statuses`` or the setting; a usage error otherwise."""
    from sandbox.config import DEFAULT_ORDER_STATUSES, parse_order_statuses

    sequence = given if given is not None else settings.sandbox_order_statuses
    try:
        return DEFAULT_ORDER_STATUSES if sequence is None else parse_order_statuses(sequence)
    except ValueError as error:
        say(f"order statuses: {error}", style="red")
        raise typer.Exit(EXIT_USAGE) from None


def _announce_sandbox(config: SandboxConfig, host: str, port: int, settings: Settings) -> None:
    """Say where a served sandbox's APIs are, with its accounts, state, log and alignments."""
    base = f"http://{host}:{port}"
    say(f"address service: {base}/address/REST/v1  (user sandbox-user / password sandbox-password)")
    say(f"assistant:       {base}/assistant/REST/v1  (the same account; beside the batch too, our way)")
    say(f"newspaper API:   {base}/newspaper  (token URL {base}/auth/OAuth/token)")
    say(f"commerce API:    {base}/commerce  (auth URL {base}/auth, client sandbox-commerce-client)")
    say(f"fault plan:      {base}/_sandbox/faults  ({_control_access(host, settings)})")
    say(f"state:           {config.state_dir or 'in memory'}")
    say(f"order statuses:  {', '.join(config.order_statuses)}")
    say(f"guesses:         {config.guesses} (docs/guesses.md)")
    if config.address_ping_answer != "status":
        say(f"address ping:    HTTP 200, {config.address_ping_answer.replace('-', ' ')} body")
    if config.request_log is not None:
        say(f"request log:     {config.request_log}")
    for key, agreed in config.alignments.items():
        outputs = ", ".join(agreed.outputs.values()) or "none"
        say(
            f"alignment:       {key}  ({len(agreed.upload.columns)} columns, id {agreed.upload.record_id} -> "
            f"{agreed.result_record_id}, extra outputs: {outputs})"
        )


def _control_access(host: str, settings: Settings) -> str:
    """Who may use the /_sandbox control endpoints of a sandbox on ``host``; never the token itself."""
    from sandbox.control import CONTROL_TOKEN_HEADER, TOKEN_SETTING, is_loopback

    if settings.sandbox_control_token is not None and settings.sandbox_control_token.get_secret_value():
        return f"with the {CONTROL_TOKEN_HEADER} header from {TOKEN_SETTING}" + (
            ", or none on loopback" if is_loopback(host) else ""
        )
    if is_loopback(host):
        return "loopback only"
    return f"refused: not on loopback and {TOKEN_SETTING} is not set"


def register(app: typer.Typer) -> None:
    """Add ``postflows sandbox`` to ``app``."""
    app.command("sandbox")(sandbox_command)
