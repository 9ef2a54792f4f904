"""Use the sandbox in-process: an httpx transport that serves the ASGI app without a socket, and what the
runtime finds through the ``postflows.sandbox`` entry point (this module) to attach it.

A fault that drops the connection surfaces as ``httpx.RemoteProtocolError``, as it would over a network; an
answer a served sandbox would hold until the client gives up (``read_timeout``) as ``httpx.ReadTimeout``,
at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import httpx
from starlette.types import Receive, Scope, Send

from sandbox.address_service.alignments import AlignmentError, alignments_setting
from sandbox.address_service.service import alignment_for
from sandbox.app import create_app
from sandbox.config import DEFAULT_ORDER_STATUSES, PingAnswer, SandboxConfig, parse_order_statuses
from sandbox.faults import IN_PROCESS_KEY, AnswerTimedOut, ConnectionDropped, FaultPlan
from sandbox.guesses import GuessMode

SANDBOX_ORIGIN = "http://sandbox.postflows.invalid"
ALIGNMENTS_SETTING = "POSTFLOWS_SANDBOX_ALIGNMENTS"


class SandboxTransport(httpx.AsyncBaseTransport):
    """Serves requests from the sandbox app in this process."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.app = create_app(self.config)
        self._asgi = httpx.ASGITransport(app=self._in_process)

    async def _in_process(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app({**scope, IN_PROCESS_KEY: True}, receive, send)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self._asgi.handle_async_request(request)
        except ConnectionDropped as exc:
            raise httpx.RemoteProtocolError(str(exc), request=request) from exc
        except AnswerTimedOut as exc:
            raise httpx.ReadTimeout(str(exc), request=request) from exc

    async def aclose(self) -> None:
        await self._asgi.aclose()

    def upload_refusal(self, key: str, head: bytes, profile: UploadProfile) -> str | None:
        """Why the results of a batch whose upload begins with ``head`` could not be merged by ``profile``
        (this sandbox's alignment for ``key`` returns the record id in another column than the profile
        expects), or None. Asked before anything is sent: a run refuses, a dry run reports it."""
        alignment = alignment_for(self.config, key, head)
        result_id = alignment.result_record_id if alignment is not None else None
        returned = result_id or profile.sent_id
        if returned == profile.returned_id:
            return None
        return (
            f"the embedded sandbox reads this upload for key {key} "
            + (
                f"by an alignment whose result carries the record id in column {returned!r}"
                if result_id
                else f"in any layout, so the record id comes back as {returned!r}"
            )
            + f", while profile {profile.name} expects it in {profile.returned_id!r}: the results could "
            f"not be merged, so nothing was sent. Give the sandbox this profile's alignment "
            f"({ALIGNMENTS_SETTING}={key}=<the profile's YAML file>) or use a key it holds"
        )


class UploadProfile(Protocol):
    """What :meth:`SandboxTransport.upload_refusal` reads of the client's alignment profile."""

    @property
    def name(self) -> str: ...
    @property
    def sent_id(self) -> str: ...
    @property
    def returned_id(self) -> str: ...


class Options(Protocol):
    """The settings an embedded sandbox is built with (the runtime's ``SandboxOptions``)."""

    @property
    def job_seconds(self) -> float: ...
    @property
    def faults(self) -> str | None: ...
    @property
    def state_dir(self) -> Path: ...
    @property
    def alignments(self) -> str | None: ...
    @property
    def order_statuses(self) -> str | None: ...
    @property
    def ping_answer(self) -> PingAnswer: ...
    @property
    def guesses(self) -> GuessMode: ...


class OptionRejected(ValueError):
    """An option the sandbox cannot be built with; ``option`` names the field of :class:`Options`."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def transport(options: Options) -> SandboxTransport:
    """The in-process sandbox built with ``options`` (the entry point's first service to the runtime).

    Raises:
        OptionRejected: the alignments or the order statuses cannot be read.
    """
    try:
        agreed = alignments_setting(options.alignments)
    except AlignmentError as error:
        raise OptionRejected("alignments", str(error)) from None
    try:
        statuses = (
            DEFAULT_ORDER_STATUSES
            if options.order_statuses is None
            else parse_order_statuses(options.order_statuses)
        )
    except ValueError as error:
        raise OptionRejected("order_statuses", str(error)) from None
    config = SandboxConfig(
        job_seconds=options.job_seconds,
        faults=FaultPlan.load(options.faults),
        state_dir=options.state_dir,
        alignments=agreed,
        order_statuses=statuses,
        address_ping_answer=options.ping_answer,
        guesses=options.guesses,
    )
    return SandboxTransport(config)


def services(origin: str = SANDBOX_ORIGIN) -> Mapping[str, Mapping[str, str | None]]:
    """Where each API is served in-process and its published test account, by the runtime's API names
    (``address-assistant``: the assistant's own mount): ``base_url``, ``user``, ``secret``, ``token_url``,
    ``auth_url``."""
    config = SandboxConfig()
    newspaper, commerce = "sandbox-client", "sandbox-commerce-client"
    address = {"user": config.address_user, "secret": config.address_password, "token_url": None}
    return {
        "address-service": {**address, "base_url": address_service_url(origin), "auth_url": None},
        "address-assistant": {**address, "base_url": address_assistant_url(origin), "auth_url": None},
        "newspaper": {
            "base_url": newspaper_url(origin),
            "user": newspaper,
            "secret": config.oauth_clients[newspaper].secret,
            "token_url": token_url(origin),
            "auth_url": None,
        },
        "commerce": {
            "base_url": commerce_url(origin),
            "user": commerce,
            "secret": config.oauth_clients[commerce].secret,
            "token_url": f"{auth_url(origin)}/OAuth/token",
            "auth_url": auth_url(origin),
        },
    }


def address_service_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/address/REST/v1"


def address_assistant_url(origin: str = SANDBOX_ORIGIN) -> str:
    """The address assistant's own base address (the batch service's app, mounted again)."""
    return f"{origin}/assistant/REST/v1"


def newspaper_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/newspaper"


def token_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/auth/OAuth/token"


def commerce_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/commerce"


def auth_url(origin: str = SANDBOX_ORIGIN) -> str:
    return f"{origin}/auth"
