"""Which answers to a submitting request certainly mean "not processed", per API, through each client's own
error mapping on the wire; every other answer leaves the outcome unknown.

The expected lists are written out here from the specifications' wording (address service §7, newspaper
§7, commerce §7), not read from the connectors' data, so a change to either shows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.address_service.errors import STATUS_TABLE
from connectors.commerce import CommerceClient
from connectors.errors import ApiError, TransportFailure
from connectors.newspaper import NewspaperClient, StandardOrder
from connectors.newspaper.errors import MESSAGE_CODES
from connectors.retry import RetryPolicy
from history.models import JobState
from tasks.submission import failed_submission_state
from tests.connectors.test_commerce_client import pickup_user
from tests.connectors.test_newspaper_client import valid_order

Handler = Callable[[httpx.Request], httpx.Response]
TOKEN_URL = "https://auth.test/OAuth/token"

ADDRESS_NOT_PROCESSED = (101, 102, 103, 104, 105, 106, 402, 403, 404, 501, 801, 802)
ADDRESS_UNCERTAIN = (201, 202, 203, 301, 302, 401, 999)
ADDRESS_UNLISTED = 555


async def _no_sleep(seconds: float) -> None:
    return None


def _options(handler: Handler) -> dict[str, Any]:
    return {
        "transport": httpx.MockTransport(handler),
        "retry": RetryPolicy(max_attempts=3, base_delay=0, jitter=0, max_window_waits=0),
        "sleep": _no_sleep,
    }


def _counting(reply: Handler) -> tuple[Handler, list[str]]:
    """A handler that answers tokens itself and counts every other request."""
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            return httpx.Response(200, json={"access_token": "t", "token_type": "Bearer", "expires_in": 600})
        sent.append(request.url.path)
        return reply(request)

    return handler, sent


async def _address_run_batch(reply: Handler) -> tuple[ApiError, list[str]]:
    handler, sent = _counting(reply)
    client = AddressServiceClient(
        "https://aws.test/REST/v1", username="u", password=SecretStr("pw"), **_options(handler)
    )
    async with client:
        with pytest.raises(ApiError) as raised:
            await client.run_batch("key_maintenance_v1", "in-token", "out-token")
    return raised.value, sent


async def _newspaper_order(reply: Handler) -> tuple[ApiError, list[str]]:
    handler, sent = _counting(reply)
    client = NewspaperClient(
        "https://newspaper.test",
        token_url=TOKEN_URL,
        client_id="c",
        client_secret=SecretStr("s"),
        today=lambda: dt.date(2030, 6, 15),
        **_options(handler),
    )
    order: StandardOrder = valid_order()
    async with client:
        with pytest.raises(ApiError) as raised:
            await client.submit_standard_order(order)
    return raised.value, sent


async def _commerce_pickup(reply: Handler) -> tuple[ApiError, list[str]]:
    handler, sent = _counting(reply)
    client = CommerceClient(
        "https://commerce.test",
        token_url=TOKEN_URL,
        client_id="c",
        client_secret=SecretStr("s"),
        **_options(handler),
    )
    async with client:
        with pytest.raises(ApiError) as raised:
            await client.register_pickup_user(pickup_user())
    return raised.value, sent


def _run_batch_status(status: int) -> Handler:
    return lambda request: httpx.Response(
        200, json={"RunBatchResult": {"BatchToken": "", "SettlementId": 0, "Status": status}}
    )


# -- address web service: the Status of runbatch -------------------------------------------------------


@pytest.mark.parametrize("status", ADDRESS_NOT_PROCESSED)
async def test_address_statuses_that_mean_not_processed(status: int) -> None:
    error, sent = await _address_run_batch(_run_batch_status(status))
    assert error.not_processed and not error.outcome_unknown
    assert failed_submission_state(error) is JobState.REJECTED
    # 106 and 501 are per-minute limits: refused, so the same request may go again (three attempts here).
    assert len(sent) == (3 if status in (106, 501) else 1)


@pytest.mark.parametrize("status", (*ADDRESS_UNCERTAIN, ADDRESS_UNLISTED))
async def test_address_statuses_that_may_follow_the_work(status: int) -> None:
    error, sent = await _address_run_batch(_run_batch_status(status))
    assert error.outcome_unknown and failed_submission_state(error) is JobState.UNCERTAIN
    assert sent == ["/REST/v1/runbatch"], "an answer that may follow the work is never followed by a resend"


def test_the_address_lists_cover_the_whole_status_table() -> None:
    listed = set(ADDRESS_NOT_PROCESSED) | set(ADDRESS_UNCERTAIN)
    assert listed == set(STATUS_TABLE) - {0}
    assert ADDRESS_UNLISTED not in STATUS_TABLE


@pytest.mark.parametrize(
    "reply",
    [
        lambda request: httpx.Response(500, json={"error": "boom"}),
        lambda request: httpx.Response(401, text="Unauthorized"),
        lambda request: httpx.Response(200, text="<html>gateway</html>"),
        lambda request: httpx.Response(200, json={"RunBatchResult": {"Status": "bad"}}),
    ],
    ids=["http-500", "http-401", "not-json", "status-not-a-number"],
)
async def test_address_http_failures_are_uncertain(reply: Handler) -> None:
    error, sent = await _address_run_batch(reply)
    assert failed_submission_state(error) is JobState.UNCERTAIN
    assert len(sent) == 1


# -- newspaper: the error array of orders/standard ------------------------------------------------------


def _newspaper_errors(status: int, *codes: str) -> Handler:
    body = {"errors": [{"error": f"{code} refused", "resource": None} for code in codes], "warnings": []}
    return lambda request: httpx.Response(status, json=body)


@pytest.mark.parametrize("code", sorted(MESSAGE_CODES))
async def test_every_newspaper_message_code_means_not_processed(code: str) -> None:
    error, sent = await _newspaper_order(_newspaper_errors(200, code))
    assert error.not_processed and failed_submission_state(error) is JobState.REJECTED
    assert len(sent) == 1


def test_the_newspaper_table_holds_the_spec_codes() -> None:
    ranges = [(0, 9), (20, 24), (30, 34), (40, 43), (50, 55), (70, 73), (100, 107), (110, 111), (150, 153)]
    expected = {f"{n:04d}" for low, high in ranges for n in range(low, high + 1)}
    expected |= {f"{n:04d}" for n in range(170, 178)} | {"0200"}
    assert set(MESSAGE_CODES) == expected


async def test_a_newspaper_4xx_with_spec_codes_means_not_processed() -> None:
    error, _ = await _newspaper_order(_newspaper_errors(400, "0005", "0030"))
    assert failed_submission_state(error) is JobState.REJECTED


async def test_a_newspaper_401_refused_the_token_so_the_order_is_sent_once_more_with_a_new_one() -> None:
    error, sent = await _newspaper_order(lambda request: httpx.Response(401, json={"error": "invalid_token"}))
    assert error.not_processed and failed_submission_state(error) is JobState.REJECTED
    assert len(sent) == 2


@pytest.mark.parametrize(
    "reply",
    [
        _newspaper_errors(200, "0999"),
        _newspaper_errors(200, "0005", "0999"),
        _newspaper_errors(500, "0005"),
        lambda request: httpx.Response(200, json={"errors": [{"error": "refused", "resource": None}]}),
        lambda request: httpx.Response(503, text="down"),
        lambda request: httpx.Response(200, json={"warnings": []}),
        lambda request: httpx.Response(200, text="<html>ok</html>"),
        lambda request: httpx.Response(403, json={"error": "forbidden"}),
    ],
    ids=[
        "unlisted-code",
        "listed-and-unlisted",
        "http-500-with-codes",
        "message-without-code",
        "http-503",
        "2xx-without-id-or-errors",
        "2xx-unreadable",
        "http-403-without-code",
    ],
)
async def test_other_newspaper_answers_are_uncertain(reply: Handler) -> None:
    error, sent = await _newspaper_order(reply)
    assert error.outcome_unknown and failed_submission_state(error) is JobState.UNCERTAIN
    assert len(sent) == 1


# -- commerce: pickup registration ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        lambda request: httpx.Response(400, json={"message": "street unknown"}),
        lambda request: httpx.Response(401, json={"message": "unauthorized"}),
        lambda request: httpx.Response(403, json={"message": "forbidden"}),
        lambda request: httpx.Response(429, json={"message": "slow down"}),
    ],
    ids=["http-400-validation", "http-401", "http-403", "http-429"],
)
async def test_commerce_answers_that_mean_not_processed(reply: Handler) -> None:
    error, _ = await _commerce_pickup(reply)
    assert error.not_processed and failed_submission_state(error) is JobState.REJECTED


@pytest.mark.parametrize(
    "reply",
    [
        lambda request: httpx.Response(500, json={"message": "internal"}),
        lambda request: httpx.Response(502, text="bad gateway"),
        lambda request: httpx.Response(400, text="<html>bad request</html>"),
        lambda request: httpx.Response(404, json={"message": "no results"}),
        lambda request: httpx.Response(200, text="not json"),
    ],
    ids=["http-500", "http-502", "http-400-not-json", "http-404", "2xx-unreadable"],
)
async def test_other_commerce_answers_are_uncertain(reply: Handler) -> None:
    error, sent = await _commerce_pickup(reply)
    assert error.outcome_unknown and failed_submission_state(error) is JobState.UNCERTAIN
    assert len(sent) == 1


# -- before anything left --------------------------------------------------------------------------------


async def test_a_refused_token_request_means_the_submission_never_left() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            return httpx.Response(401, json={"error": "invalid_client"})
        raise AssertionError("the order must not be sent without a token")

    client = NewspaperClient(
        "https://newspaper.test",
        token_url=TOKEN_URL,
        client_id="c",
        client_secret=SecretStr("s"),
        today=lambda: dt.date(2030, 6, 15),
        **_options(handler),
    )
    async with client:
        with pytest.raises(ApiError) as raised:
            await client.submit_standard_order(valid_order())
    assert failed_submission_state(raised.value) is JobState.NOT_SENT


def test_a_connection_never_made_is_not_sent_and_a_lost_answer_is_uncertain() -> None:
    assert failed_submission_state(TransportFailure("refused", api="x", sent=False)) is JobState.NOT_SENT
    assert failed_submission_state(TransportFailure("dropped", api="x")) is JobState.UNCERTAIN
