"""``postflows doctor --live``: the configured contracts asked with requests that bill nothing and leave
nothing behind, and what their answers show of the registered guesses (:mod:`connectors.guesses`).

Exactly these requests go out: the address service's ``GET /ping``, ``GET /createfile`` and ``GET
/deletefile/{token}`` of that file; a client-credentials token for each of the newspaper API's scopes; a
client-credentials token for each configured non-personal scope of the commerce API and its ``GET
<address path>/zips?zipCity=8001``. The clients are the connectors' own, built from the same settings as a
run's; the raw answers (status, body kind) are seen through an httpx response hook on the client's
``httpx.AsyncClient``, so nothing in the connectors changes for it. Tokens are fetched here from the
connectors' :class:`~connectors.oauth.ClientCredentials`, without any API request.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager

import httpx

from connectors.address_service import AddressServiceClient
from connectors.address_service.errors import AuthenticationStatusError, DatabaseStatusError
from connectors.errors import ApiError, AuthFailed, NotFound, TransportFailure
from connectors.guesses import guess
from connectors.http import ClientOptions
from postflows.doctor import ApiReport, Check, Observed
from postflows.doctor_answers import Answers, describe, is_sign_in_refusal, status_in
from postflows.doctor_tokens import check_commerce, check_newspaper
from runtime.endpoints import ConfigurationError
from runtime.settings import Settings
from runtime.wiring import Service, resolve, response_limits, retry_policy

DOCTOR_FLOW = "doctor"
"""The flow name of the run the history records when the doctor's file could not be deleted."""
ADDRESS_CREDENTIALS = "check POSTFLOWS_ADDRESS_SERVICE_USER / POSTFLOWS_ADDRESS_SERVICE_PASSWORD"
ADDRESS_URL = "check POSTFLOWS_ADDRESS_SERVICE_URL (the base address ends in REST/v1)"


async def live_checks(settings: Settings, reports: list[ApiReport]) -> None:
    """Ask each API of ``reports`` whose settings are complete, adding its checks and observed guesses."""
    for report in reports:
        if not report.ok:
            continue  # its settings are not complete: it is not asked
        try:
            service = resolve(settings, report.api)
        except ConfigurationError as error:
            report.checks.append(Check("settings", False, " ".join(str(error).split())))
            continue
        async with _http(settings, service) as (http, answers):
            if report.api == "address-service":
                await check_address_service(settings, service, http, answers, report)
            elif report.api == "newspaper":
                await check_newspaper(settings, service, http, answers, report)
            else:
                await check_commerce(settings, service, http, answers, report)


@asynccontextmanager
async def _http(settings: Settings, service: Service) -> AsyncIterator[tuple[httpx.AsyncClient, Answers]]:
    """The HTTP client the doctor's clients share for ``service`` (the network, or the embedded sandbox),
    with every answer kept for a look at its status and body."""
    answers = Answers()
    async with httpx.AsyncClient(
        transport=service.transport(settings, None),
        timeout=settings.http_timeout_s,
        event_hooks={"response": [answers.keep]},
    ) as http:
        yield http, answers


async def check_address_service(
    settings: Settings, service: Service, http: httpx.AsyncClient, answers: Answers, report: ApiReport
) -> None:
    """Ping, then create a file and delete it again: the credentials reach the service, nothing is billed."""
    client = AddressServiceClient(
        service.base_url,
        username=service.user,
        password=service.secret,
        options=ClientOptions(
            http_client=http, retry=retry_policy(settings), limits=response_limits(settings)
        ),
    )
    error = await _attempt(client.ping())
    ping = answers.last("GET", "/ping")
    report.reachable = ping is not None
    report.checks.append(_address_check("ping", error, ping, ok=describe(ping)))
    report.observed.append(_ping_body(ping))
    token: str | None = None
    if error is None:
        try:
            token = await client.create_file()
        except ApiError as failed:
            error = failed
        created = answers.last("GET", "/createfile")
        made = f"sign-in accepted, file {token} made ({describe(created)})"
        report.checks.append(_address_check("createfile", error, created, ok=made))
    report.observed.append(_failure_status(answers))
    if token is None:
        report.observed.append(Observed(guess("address-service.deletefile-302"), None, "no file was made"))
        return
    deleted = await _attempt(client.delete_file(token))
    first = answers.last("GET", f"/deletefile/{token}")
    if isinstance(deleted, DatabaseStatusError):
        # 301/302 "error accessing the database" may pass (the guess address-service.deletefile-302): the
        # doctor's own file is asked for once more, as `postflows cleanup` would.
        deleted = await _attempt(client.delete_file(token))
    answer = answers.last("GET", f"/deletefile/{token}")
    report.checks.append(await _deletion(settings, token, deleted, answer))
    report.observed.append(_deletion_guess(first, answer))


async def _attempt(call: Awaitable[object]) -> ApiError | None:
    """The error of an awaited client call, or None when it returned."""
    try:
        await call
    except ApiError as error:
        return error
    return None


def _address_check(name: str, error: ApiError | None, answer: httpx.Response | None, *, ok: str) -> Check:
    """The check of one address-service request: ``ok`` when it succeeded, else what failed and what to
    set."""
    if error is None:
        return Check(name, True, ok)
    if isinstance(error, AuthenticationStatusError):
        return Check(
            name, False, f"sign-in refused (Status {error.status} {error.name})", ADDRESS_CREDENTIALS
        )
    if isinstance(error, AuthFailed):
        return Check(name, False, f"sign-in refused (HTTP {error.status_code})", ADDRESS_CREDENTIALS)
    text = " ".join(str(error).split())
    if isinstance(error, TransportFailure) and not error.sent:
        return Check(name, False, f"not reachable ({text})", ADDRESS_URL)
    if isinstance(error, NotFound):
        return Check(name, False, f"GET /{name} answered HTTP 404", ADDRESS_URL)
    if name == "createfile" and error.outcome_unknown:
        text += (
            "; a file may be left on the service whose token never arrived (the service deletes files "
            "three months after they were made)"
        )
    return Check(name, False, f"{text} ({describe(answer)})", ADDRESS_URL)


def _ping_body(ping: httpx.Response | None) -> Observed:
    """What a successful ping's body is: the guess is ``{"Status": 0}``; a refusal (an HTTP error, a Status
    other than 0) shows nothing of it."""
    known = guess("address-service.ping-body")
    if ping is None:
        return Observed(known, None, "no answer to GET /ping")
    seen = f"GET /ping: {describe(ping)}"
    status = status_in(ping, wrapped=False)
    if ping.status_code != 200 or status not in (None, 0):
        return Observed(known, None, f"{seen}, a refusal")
    return Observed(known, status == 0, seen)


def _failure_status(answers: Answers) -> Observed:
    """How the service answered a refused sign-in (the guess is that a failure is HTTP 200 with its
    Status); not observed when the sign-in was accepted."""
    known = guess("address-service.failure-http-status")
    refusal = next(
        (
            answer
            for answer in (answers.last("GET", "/ping"), answers.last("GET", "/createfile"))
            if answer is not None and is_sign_in_refusal(answer)
        ),
        None,
    )
    if refusal is None:
        return Observed(
            known, None, "no sign-in was refused; a refusal's HTTP status shows with wrong credentials"
        )
    seen = f"the sign-in was refused with {describe(refusal)}"
    return Observed(known, refusal.status_code == 200 and status_in(refusal) is not None, seen)


async def _deletion(
    settings: Settings, token: str, error: ApiError | None, answer: httpx.Response | None
) -> Check:
    """The check of the deletion: passed only on Status 0. A file left on the service is recorded in the run
    history, so ``postflows cleanup`` asks again."""
    if error is None:
        return Check("deletefile", True, f"file {token} deleted ({describe(answer)})")
    what = " ".join(str(error).split())
    left = f"the file {token} made by createfile could not be deleted: {what}"
    why_not = await asyncio.to_thread(record_left_file, settings, token, left)
    if why_not is None:
        fix = "it is recorded in the run history: `postflows cleanup --older-than 0` asks the service again"
    else:
        fix = (
            f"it could not be recorded in the run history ({why_not}): delete it with GET /deletefile/{token}"
        )
    return Check("deletefile", False, left, fix)


def _deletion_guess(first: httpx.Response | None, last: httpx.Response | None) -> Observed:
    """What the deletion of the doctor's file says of the guess: Status 0 deletes, a 301/302 may pass."""
    known = guess("address-service.deletefile-302")
    if last is None:
        return Observed(known, None, "no answer to GET /deletefile")
    status = status_in(last)
    seen = f"GET /deletefile of the file just made: {describe(last)}"
    if first is not None and first is not last:
        seen = f"GET /deletefile of the file just made: {describe(first)}, asked again: {describe(last)}"
    return Observed(known, None if status is None else status == 0, seen)


def record_left_file(settings: Settings, token: str, detail: str) -> str | None:
    """Record the doctor's file ``token`` as left on the address service, in a run of flow ``doctor`` that
    failed with ``detail``, where ``postflows cleanup`` finds it; returns None when recorded, else why not."""
    import history

    try:
        with history.session_factory(settings.effective_database_url).begin() as session:
            run = history.start_run(session, flow=DOCTOR_FLOW, parameters={"live": True})
            history.save_remote_job(
                session,
                run,
                api="address-service",
                kind="output-file",
                remote_id=token,
                change=history.JobChange(status=history.JobState.SUBMITTED.value),
            )
            history.finish_run(session, run, state=history.RunState.FAILED, error=detail)
    except Exception as error:  # noqa: BLE001 - the check still reports the file and its token
        return " ".join(f"{type(error).__name__}: {error}".split())[:300]
    return None
