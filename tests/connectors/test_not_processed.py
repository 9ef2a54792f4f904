"""Which answers to a submitting request certainly mean "not processed", per API, through each client's own
error mapping on the wire; every other answer leaves the outcome unknown.

The expected lists are written out here from the specifications' wording (address service §7, newspaper
§7, commerce §7), not read from the connectors' data, so a change to either shows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable

import httpx
import pytest
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient
from connectors.address_service.errors import STATUS_TABLE
from connectors.commerce import (
    CommerceClient,
    CommerceRejected,
    DeliveryAddress,
    SameDayRequest,
    ValidationRequest,
)
from connectors.commerce.errors import GuessedPathNotFound
from connectors.errors import ApiError, TransportFailure
from connectors.http import ClientOptions
from connectors.newspaper import NewspaperClient, StandardOrder
from connectors.newspaper.codes import MESSAGE_CODES
from connectors.oauth import ClientCredentials
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


def _options(handler: Handler) -> ClientOptions:
    return ClientOptions(
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(max_attempts=3, base_delay=0, jitter=0, max_window_waits=0),
        sleep=_no_sleep,
    )


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
        "https://aws.test/REST/v1", username="u", password=SecretStr("pw"), options=_options(handler)
    )
    async with client:
        with pytest.raises(ApiError) as raised:
            await client.run_batch("key_maintenance_v1", "in-token", "out-token")
    return raised.value, sent


async def _newspaper_order(reply: Handler) -> tuple[ApiError, list[str]]:
    handler, sent = _counting(reply)
    client = NewspaperClient(
        "https://newspaper.test",
        today=lambda: dt.date(2030, 6, 15),
        options=_options(handler),
        credentials=ClientCredentials(TOKEN_URL, "c", SecretStr("s"), api="newspaper"),
    )
    order: StandardOrder = valid_order()
    async with client:
        with pytest.raises(ApiError) as raised:
            await client.submit_standard_order(order)
    return raised.value, sent


def _commerce_client(handler: Handler) -> CommerceClient:
    return CommerceClient(
        "https://commerce.test",
        options=_options(handler),
        credentials=ClientCredentials(TOKEN_URL, "c", SecretStr("s"), api="commerce"),
    )


CommerceCall = Callable[[CommerceClient], Awaitable[object]]
PICKUP_REGISTRATION: CommerceCall = lambda client: client.register_pickup_user(pickup_user())  # noqa: E731
ADDRESS_LABEL: CommerceCall = lambda client: client.create_address_label_as_received({"item": {}})  # noqa: E731
RETURN_ORDER: CommerceCall = lambda client: client.create_return_order_as_received({"order": 1})  # noqa: E731
# The submissions of the commerce API and the variable of the path each is posted to.
COMMERCE_SUBMISSIONS = {
    "pickup-registration": (PICKUP_REGISTRATION, "POSTFLOWS_COMMERCE_PICKUP_PATH"),
    "address-label": (ADDRESS_LABEL, "POSTFLOWS_COMMERCE_BARCODE_PATH"),
    "return-order": (RETURN_ORDER, "POSTFLOWS_COMMERCE_RETURN_ORDER_PATH"),
}


async def _commerce(reply: Handler, submit: CommerceCall = PICKUP_REGISTRATION) -> tuple[ApiError, list[str]]:
    handler, sent = _counting(reply)
    async with _commerce_client(handler) as client:
        with pytest.raises(ApiError) as raised:
            await submit(client)
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


# §7 lists them among the messages, yet neither says that nothing was kept: 0004 "cash payment required for
# this issue before processing" (the order waits for its payment), 0007 "issue number previously used for
# another issue" (that issue may be this very order, sent before).
NEWSPAPER_UNCERTAIN_CODES = ("0004", "0007")


@pytest.mark.parametrize("code", sorted(set(MESSAGE_CODES) - set(NEWSPAPER_UNCERTAIN_CODES)))
async def test_every_newspaper_refusal_code_means_not_processed(code: str) -> None:
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
        _newspaper_errors(200, "0004"),
        _newspaper_errors(200, "0007"),
        _newspaper_errors(200, "0030", "0004"),
        _newspaper_errors(400, "0007"),
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
        "0004-cash-payment",
        "0007-issue-number-used",
        "refusal-and-0004",
        "http-400-0007",
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


# -- commerce: pickup registration, address labels, return orders ---------------------------------------
# §7 lists 200, 403 and 500 for pickup users and shows no row for labels and return orders: a 400 there does
# not say that nothing was done. Their paths are settings (the pickup sub-API is served elsewhere by the real
# service; the others are not shown at all): a 404 or 405 says nothing is there.


@pytest.mark.parametrize("submission", sorted(COMMERCE_SUBMISSIONS))
@pytest.mark.parametrize(
    "reply",
    [
        lambda request: httpx.Response(401, json={"message": "unauthorized"}),
        lambda request: httpx.Response(403, json={"message": "forbidden"}),
        lambda request: httpx.Response(429, json={"message": "slow down"}),
    ],
    ids=["http-401", "http-403", "http-429"],
)
async def test_commerce_answers_that_mean_not_processed(reply: Handler, submission: str) -> None:
    error, _ = await _commerce(reply, COMMERCE_SUBMISSIONS[submission][0])
    assert error.not_processed and failed_submission_state(error) is JobState.REJECTED


@pytest.mark.parametrize("submission", sorted(COMMERCE_SUBMISSIONS))
@pytest.mark.parametrize("status", [404, 405])
async def test_commerce_404_or_405_at_a_path_that_is_a_setting_is_not_processed_and_names_it(
    submission: str, status: int
) -> None:
    submit, setting = COMMERCE_SUBMISSIONS[submission]
    error, sent = await _commerce(lambda request: httpx.Response(status, json={"code": "NOT_FOUND"}), submit)
    assert isinstance(error, GuessedPathNotFound) and error.setting == setting and setting in str(error)
    assert error.not_processed and failed_submission_state(error) is JobState.REJECTED
    assert len(sent) == 1


@pytest.mark.parametrize("submission", sorted(COMMERCE_SUBMISSIONS))
@pytest.mark.parametrize(
    "reply",
    [
        lambda request: httpx.Response(400, json={"message": "street unknown"}),
        lambda request: httpx.Response(400, text="<html>bad request</html>"),
        lambda request: httpx.Response(500, json={"message": "internal"}),
        lambda request: httpx.Response(502, text="bad gateway"),
    ],
    ids=["http-400-json", "http-400-not-json", "http-500", "http-502"],
)
async def test_other_commerce_answers_are_uncertain(reply: Handler, submission: str) -> None:
    error, sent = await _commerce(reply, COMMERCE_SUBMISSIONS[submission][0])
    assert error.outcome_unknown and failed_submission_state(error) is JobState.UNCERTAIN
    assert len(sent) == 1


async def test_an_unreadable_pickup_registration_answer_is_uncertain() -> None:
    error, sent = await _commerce(lambda request: httpx.Response(200, text="not json"))
    assert error.outcome_unknown and failed_submission_state(error) is JobState.UNCERTAIN
    assert len(sent) == 1


# -- commerce: a 400 per endpoint group ------------------------------------------------------------------
# "Not processed" only where the group's row of §7 lists 400 ("incomplete or invalid parameters").


def _delivery_address() -> DeliveryAddress:
    return DeliveryAddress.model_validate({"geographicLocation": {"zip": {"zip": "8001", "city": "Zürich"}}})


REFUSAL_LISTED: dict[str, CommerceCall] = {
    "validation": lambda client: client.validate_address(
        ValidationRequest.model_validate({"geographicLocation": {"zip": {"zip": "8001"}}})
    ),
    "zips": lambda client: client.zips("80"),
    "streets": lambda client: client.streets("Ba"),
    "houses": lambda client: client.houses("8001", "Bahnhofstrasse"),
    "same-day": lambda client: client.same_day_acceptance_points(
        SameDayRequest(address=_delivery_address(), delivery_date=dt.date(2030, 6, 18))
    ),
}
REFUSAL_NOT_LISTED: dict[str, CommerceCall] = {
    "pickup-registration": PICKUP_REGISTRATION,
    "pickup-points": lambda client: client.pickup_points(pickup_user()),
    "address-label": ADDRESS_LABEL,
    "return-order": RETURN_ORDER,
    "deliverabilities": lambda client: client.deliverabilities(_delivery_address()),
}


@pytest.mark.parametrize("operation", sorted(REFUSAL_LISTED))
async def test_a_400_where_section_7_lists_it_means_not_processed(operation: str) -> None:
    error, sent = await _commerce(
        lambda request: httpx.Response(400, json={"message": "invalid parameter"}), REFUSAL_LISTED[operation]
    )
    assert isinstance(error, CommerceRejected) and error.not_processed
    assert error.detail == "invalid parameter" and len(sent) == 1


async def test_a_400_of_a_personal_address_means_not_processed() -> None:
    handler, sent = _counting(lambda request: httpx.Response(400, json={"message": "invalid id parameter"}))
    user = ClientCredentials(TOKEN_URL, "c", SecretStr("s"), api="commerce")
    client = CommerceClient("https://commerce.test", credentials=user, user=user, options=_options(handler))
    async with client:
        with pytest.raises(CommerceRejected) as raised:
            await client.address("not-a-uuid")
    assert raised.value.not_processed and len(sent) == 1


@pytest.mark.parametrize("operation", sorted(REFUSAL_NOT_LISTED))
async def test_a_400_where_section_7_lists_none_leaves_the_outcome_unknown(operation: str) -> None:
    error, _ = await _commerce(
        lambda request: httpx.Response(400, json={"message": "invalid parameter"}),
        REFUSAL_NOT_LISTED[operation],
    )
    assert isinstance(error, CommerceRejected) and error.outcome_unknown


# -- before anything left --------------------------------------------------------------------------------


async def test_a_refused_token_request_means_the_submission_never_left() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            return httpx.Response(401, json={"error": "invalid_client"})
        raise AssertionError("the order must not be sent without a token")

    client = NewspaperClient(
        "https://newspaper.test",
        today=lambda: dt.date(2030, 6, 15),
        options=_options(handler),
        credentials=ClientCredentials(TOKEN_URL, "c", SecretStr("s"), api="newspaper"),
    )
    async with client:
        with pytest.raises(ApiError) as raised:
            await client.submit_standard_order(valid_order())
    assert failed_submission_state(raised.value) is JobState.NOT_SENT


def test_a_connection_never_made_is_not_sent_and_a_lost_answer_is_uncertain() -> None:
    assert failed_submission_state(TransportFailure("refused", api="x", sent=False)) is JobState.NOT_SENT
    assert failed_submission_state(TransportFailure("dropped", api="x")) is JobState.UNCERTAIN
