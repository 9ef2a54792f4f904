"""Newspaper §7 read as the specification allows: a message code wherever it stands in the text, an order or
purchase answered 2xx with its id taken even when errors come with it, and "not processed" only for an
answer without an id whose every code refuses (0004 and 0007 do not)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from connectors.http import ClientOptions
from connectors.newspaper import NewspaperClient, NewspaperRejected, StatisticsRecord
from connectors.newspaper.codes import NOT_PROCESSED_CODES, UNCERTAIN_CODES, codes_in_text
from connectors.newspaper.errors import certainly_refused, parse_message
from connectors.oauth import ClientCredentials
from connectors.retry import RetryPolicy
from history.models import JobState
from tasks.submission import failed_submission_state
from tests.connectors.test_newspaper_client import valid_order, valid_purchase

TOKEN_URL = "https://auth.test/OAuth/token"
Reply = Callable[[httpx.Request], httpx.Response]


# -- reading a code ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "0030 weight 5 not in 10-500",
        "Error 0030: weight",
        "weight range violated (code 0030)",
        "weight range violated, code 0030.",
        "[0030] weight",
        "E-0030 weight",
    ],
)
def test_a_code_is_read_wherever_it_stands_in_the_text(text: str) -> None:
    message = parse_message({"error": text, "resource": None})
    assert message is not None
    assert (message.code, message.codes) == ("0030", ("0030",))
    assert message.meaning == "permitted weight range (grams) violated for district bundles"


@pytest.mark.parametrize(
    "text",
    [
        "12345 is not a code",
        "order 70000301 refused",
        "weight 1.0030 kg",
        "weight 0030.5 g",
        "price 2'0030",
        "E0030 weight",
        "0030abc",
        "code_0030",
        "weight range 10 - 2000 g",
        "0999 unknown message",
        "delivery in 2031 refused",
        "no code here",
    ],
)
def test_only_whole_four_digit_words_of_the_table_are_codes(text: str) -> None:
    message = parse_message(text)
    assert message is not None
    assert (message.code, message.codes, message.meaning) == (None, (), "")
    assert not message.refuses


def test_every_code_of_a_text_is_read_in_order_the_first_is_the_code() -> None:
    assert codes_in_text("0030 weight 10 - 2000 g; see also 0004 and 0030") == ("0030", "0004")
    message = parse_message("Error 0030 (payment: 0004)")
    assert message is not None
    assert (message.code, message.codes) == ("0030", ("0030", "0004"))
    assert not message.refuses, "a message that also says 0004 does not certainly refuse"


def test_a_code_field_comes_first_and_the_text_adds_its_codes() -> None:
    message = parse_message({"error": "weight violated, see 0031", "code": 30})
    assert message is not None
    assert (message.code, message.codes) == ("0030", ("0030", "0031"))
    assert message.refuses
    unlisted = parse_message({"error": "something odd", "code": "999"})
    assert unlisted is not None
    assert (unlisted.code, unlisted.refuses) == ("0999", False)


# -- the decision -----------------------------------------------------------------------------------------


def _errors(*texts: str) -> list[Any]:
    return [message for text in texts if (message := parse_message(text)) is not None]


def test_0004_and_0007_are_not_refusals() -> None:
    assert set(UNCERTAIN_CODES) == {"0004", "0007"}
    assert not set(UNCERTAIN_CODES) & NOT_PROCESSED_CODES
    assert not certainly_refused(_errors("0004 cash payment required"), status_code=200)
    assert not certainly_refused(_errors("0007 issue number used"), status_code=400)
    assert not certainly_refused(_errors("0030 weight", "0007 issue number used"), status_code=200)
    assert certainly_refused(_errors("0030 weight", "0005 date"), status_code=200)


def test_an_id_a_5xx_or_a_plain_confirmation_leave_it_uncertain() -> None:
    refusal = _errors("0030 weight")
    assert certainly_refused(refusal, status_code=200)
    assert not certainly_refused(refusal, status_code=200, remote_id=7000001)
    assert not certainly_refused(refusal, status_code=400, remote_id=7000001)
    assert not certainly_refused(refusal, status_code=502)
    assert not certainly_refused(_errors("0200 statistics"), status_code=200, confirmation=True)
    assert certainly_refused(_errors("0200 statistics"), status_code=400, confirmation=True)
    assert not certainly_refused(_errors("refused, no code"), status_code=200)
    assert not certainly_refused([], status_code=200)


# -- through the client -----------------------------------------------------------------------------------


def _client(reply: Reply, sent: list[str]) -> NewspaperClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            return httpx.Response(200, json={"access_token": "t", "token_type": "Bearer", "expires_in": 600})
        sent.append(f"{request.method} {request.url.path}")
        return reply(request)

    async def no_sleep(seconds: float) -> None:
        return None

    return NewspaperClient(
        "https://newspaper.test",
        today=lambda: dt.date(2030, 6, 15),
        credentials=ClientCredentials(TOKEN_URL, "c", SecretStr("s"), api="newspaper"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=3, base_delay=0, jitter=0),
            sleep=no_sleep,
        ),
    )


def _json(status: int, body: Any) -> Reply:
    return lambda request: httpx.Response(status, json=body)


WEIGHT_ERROR = {"error": "Error 0030: weight 90 outside 100-500", "resource": None}
LATE_WARNING = {"error": "late delivery registered", "resource": None}


@pytest.mark.parametrize("status", [200, 201])
async def test_an_order_answered_with_its_id_and_an_error_is_taken(status: int) -> None:
    sent: list[str] = []
    body = {"id": 7000001, "errors": [WEIGHT_ERROR], "warnings": [LATE_WARNING]}
    async with _client(_json(status, body), sent) as client:
        result = await client.submit_standard_order(valid_order())
    assert result.value == 7000001
    assert [(error.code, error.message) for error in result.errors] == [
        ("0030", "Error 0030: weight 90 outside 100-500")
    ]
    assert [warning.message for warning in result.warnings] == ["late delivery registered"]
    assert sent == ["POST /logistics/newspaper/submission/v1/orders/standard"]


@pytest.mark.parametrize(
    "body",
    [
        {"id": 42, "errors": [WEIGHT_ERROR]},
        {"purchaseId": "42", "errors": [WEIGHT_ERROR]},
    ],
)
async def test_a_purchase_answered_with_its_id_and_an_error_is_taken(body: dict[str, Any]) -> None:
    sent: list[str] = []
    async with _client(_json(200, body), sent) as client:
        result = await client.submit_purchase(valid_purchase())
    assert (result.value, [error.code for error in result.errors]) == (42, ["0030"])
    assert sent == ["POST /logistics/newspaper/address/v1/purchases"]


async def test_a_purchase_answered_with_a_bare_id_has_no_errors() -> None:
    sent: list[str] = []

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="42")

    async with _client(reply, sent) as client:
        result = await client.submit_purchase(valid_purchase())
    assert (result.value, result.errors, result.warnings) == (42, (), ())


@pytest.mark.parametrize(
    ("body", "state"),
    [
        ({"id": None, "errors": [WEIGHT_ERROR]}, JobState.REJECTED),
        ({"errors": ["weight range violated (code 0030)"]}, JobState.REJECTED),
        ({"id": None, "errors": ["0004 cash payment required before processing"]}, JobState.UNCERTAIN),
        ({"errors": ["issue number previously used for another issue (0007)"]}, JobState.UNCERTAIN),
        ({"id": None, "errors": ["weight outside 100-500"]}, JobState.UNCERTAIN),
    ],
    ids=["null-id-0030", "code-at-the-end", "0004", "0007-at-the-end", "no-code"],
)
async def test_an_order_answered_with_errors_and_no_id(body: dict[str, Any], state: JobState) -> None:
    sent: list[str] = []
    async with _client(_json(200, body), sent) as client:
        with pytest.raises(NewspaperRejected) as raised:
            await client.submit_standard_order(valid_order())
    assert failed_submission_state(raised.value) is state
    assert raised.value.remote_id is None
    assert len(sent) == 1


async def test_an_http_error_that_carries_an_id_is_uncertain_and_names_it() -> None:
    sent: list[str] = []
    body = {"id": 7000001, "errors": [WEIGHT_ERROR]}
    async with _client(_json(400, body), sent) as client:
        with pytest.raises(NewspaperRejected, match="the answer carries id 7000001") as raised:
            await client.submit_standard_order(valid_order())
    assert raised.value.remote_id == 7000001
    assert failed_submission_state(raised.value) is JobState.UNCERTAIN
    assert len(sent) == 1


RECORD = StatisticsRecord(
    newspaper_id=5, product="TUESDAY_EDITION", delivery_date=dt.date(2030, 6, 15), count=3
)


@pytest.mark.parametrize(
    ("status", "state"), [(200, JobState.UNCERTAIN), (400, JobState.REJECTED)], ids=["2xx", "http-400"]
)
async def test_statistics_answered_with_errors_are_uncertain_unless_refused_by_an_http_error(
    status: int, state: JobState
) -> None:
    sent: list[str] = []
    body = {"errors": [{"error": "0200 statistics cannot be processed", "resource": None}]}
    async with _client(_json(status, body), sent) as client:
        with pytest.raises(NewspaperRejected) as raised:
            await client.submit_statistics([RECORD])
    assert failed_submission_state(raised.value) is state
    assert len(sent) == 1


async def test_a_notice_email_answered_2xx_with_errors_is_uncertain() -> None:
    sent: list[str] = []
    body = {"errors": [{"error": "0000 function not available yet", "resource": None}]}
    async with _client(_json(200, body), sent) as client:
        with pytest.raises(NewspaperRejected) as raised:
            await client.register_structure_file_email("vertrieb@example.ch")
    assert failed_submission_state(raised.value) is JobState.UNCERTAIN
