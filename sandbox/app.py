"""The combined sandbox app: each API under its own mount, fault injection around all of them.

Mounts: ``/address/REST/v1`` (address web service), ``/newspaper`` (newspaper API host) and ``/auth``
(OAuth token endpoint at ``/auth/OAuth/token``). ``/_sandbox/faults`` reads and replaces the fault plan;
``/_sandbox/requests`` lists (GET) and resets (DELETE) the requests counted per API, method and endpoint.
"""

from __future__ import annotations

from fastapi import FastAPI

from sandbox.config import SandboxConfig
from sandbox.faults import API_MOUNTS, FaultMiddleware, FaultRule, RequestCount, RequestCounter


def create_app(config: SandboxConfig | None = None) -> FastAPI:
    """Build the sandbox ASGI app for ``config`` (defaults: published test accounts, no faults)."""
    from sandbox import address_service, auth, newspaper

    config = config or SandboxConfig()
    app = FastAPI(title="postflows sandbox", version="1")
    app.state.config = config
    counter = RequestCounter()
    app.state.requests = counter

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

    @app.delete("/_sandbox/requests")
    def reset_requests() -> dict[str, int]:
        counter.reset()
        return {"requests": 0}

    app.mount(API_MOUNTS["address"], address_service.create_app(config))
    app.mount(API_MOUNTS["newspaper"], newspaper.create_app(config))
    app.mount(API_MOUNTS["auth"], auth.create_app(config))
    app.add_middleware(FaultMiddleware, plan=config.faults, counter=counter)
    return app
