"""The combined sandbox app: each API under its own mount, fault injection around all of them.

Mounts: ``/address/REST/v1`` (address web service), ``/newspaper`` (newspaper API host), ``/commerce``
(commerce API) and ``/auth`` (the authorization server: OAuth 2.0 and OpenID Connect endpoints).
``/_sandbox/faults`` reads and replaces the fault plan; ``/_sandbox/requests`` lists (GET) and resets
(DELETE) the requests counted per API, method and endpoint, ``/_sandbox/accepted`` lists those the API
accepted, and ``/_sandbox/stored`` lists what the APIs hold now (address-service files and batch jobs,
newspaper orders, purchases and statistics uploads). With ``config.request_log`` every API request is also
written to that file as a JSON line (:mod:`sandbox.request_log`). Every ``_sandbox`` route answers only as
:mod:`sandbox.control` allows. What the APIs remember lives in memory, or in ``config.state_dir`` shared with
other processes (see :mod:`sandbox.state`).
"""

from __future__ import annotations

from fastapi import FastAPI

from sandbox.config import SandboxConfig, with_other_answers
from sandbox.control import ControlGuard
from sandbox.fault_middleware import FaultMiddleware
from sandbox.faults import API_MOUNTS, FaultRule
from sandbox.guesses import GuessMarkMiddleware, guess_log_from_environment
from sandbox.other_answers import OtherAnswersMiddleware
from sandbox.request_counter import RequestCount, RequestCounter
from sandbox.request_log import RequestLog, RequestLogMiddleware
from sandbox.state import SandboxState
from sandbox.state_file import TransactionMiddleware, open_state

# What ``/_sandbox/stored`` lists: name → the state table holding it.
STORED_TABLES: dict[str, str] = {
    "address_files": "address.files",
    "address_jobs": "address.jobs",
    "newspaper_orders": "newspaper.orders",
    "newspaper_purchases": "newspaper.purchases",
    "statistics_uploads": "newspaper.statistics_uploads",
}


def create_app(config: SandboxConfig | None = None) -> FastAPI:
    """Build the sandbox ASGI app for ``config`` (defaults: published test accounts, no faults)."""
    config = with_other_answers(config or SandboxConfig())
    state = open_state(config.state_dir)
    if state.shared:
        config.faults.count_in(state.table("sandbox.fault_counts"))
    app = FastAPI(title="postflows sandbox", version="1")
    app.state.config = config
    app.state.sandbox_state = state
    counter = RequestCounter(state)
    app.state.requests = counter
    _add_control_routes(app, config, state, counter)
    _mount_apis(app, config, state)
    _add_middleware(app, config, state, counter)
    return app


def _add_control_routes(
    app: FastAPI, config: SandboxConfig, state: SandboxState, counter: RequestCounter
) -> None:
    """The ``/_sandbox`` routes that set faults and read what the sandbox received and stored."""

    @app.get("/_sandbox/faults")
    def list_faults() -> list[FaultRule]:
        return config.faults.rules

    @app.put("/_sandbox/faults")
    def replace_faults(rules: list[FaultRule]) -> list[FaultRule]:
        config.faults.replace(rules)
        return config.faults.rules

    @app.delete("/_sandbox/faults")
    def clear_faults() -> dict[str, int]:
        config.faults.clear()
        return {"rules": 0}

    @app.get("/_sandbox/requests")
    def list_requests() -> list[RequestCount]:
        return counter.counts()

    @app.get("/_sandbox/accepted")
    def list_accepted() -> list[RequestCount]:
        return counter.accepted()

    @app.delete("/_sandbox/requests")
    def reset_requests() -> dict[str, int]:
        counter.reset()
        return {"requests": 0}

    @app.get("/_sandbox/stored")
    def list_stored() -> dict[str, list[str]]:
        return {name: state.table(table).keys() for name, table in STORED_TABLES.items()}


def _mount_apis(app: FastAPI, config: SandboxConfig, state: SandboxState) -> None:
    """The apps of the three APIs and of the authorization server, each at its mount."""
    from sandbox import address_service, auth, newspaper
    from sandbox.commerce import api as commerce

    app.mount(API_MOUNTS["commerce"], commerce.create_app(config, state))
    address = address_service.create_app(config, state)
    app.mount(API_MOUNTS["address"], address)
    app.mount(API_MOUNTS["assistant"], address)
    app.mount(API_MOUNTS["newspaper"], newspaper.create_app(config, state))
    app.mount(API_MOUNTS["auth"], auth.create_app(config, state))


def _add_middleware(
    app: FastAPI, config: SandboxConfig, state: SandboxState, counter: RequestCounter
) -> None:
    """The middleware around every request; the last one added runs first."""
    from sandbox import address_service, newspaper
    from sandbox.commerce import api as commerce

    # Faults are chosen before the request's transaction opens.
    app.add_middleware(TransactionMiddleware, state=state)
    app.add_middleware(
        FaultMiddleware,
        plan=config.faults,
        counter=counter,
        state=state,
        failure_answers={
            "address": address_service.processed_failure,
            "newspaper": newspaper.processed_failure,
            "commerce": commerce.processed_failure,
        },
        accepted_answers={"address": address_service.accepted, "newspaper": newspaper.accepted},
        expire_tokens=lambda: config.tokens.expire_all(config.clock()),
    )
    # Outside the faults: an answer a fault replaces is reshaped too, and says which guesses it plays.
    app.add_middleware(OtherAnswersMiddleware)
    app.add_middleware(GuessMarkMiddleware, log=guess_log_from_environment(), mode=config.guesses)
    if config.request_log is not None:
        app.add_middleware(RequestLogMiddleware, log=RequestLog(config.request_log))
    # Outermost: a refused control request is neither counted nor given a fault.
    app.add_middleware(ControlGuard, listen_host=config.listen_host, token=config.control_token)
