"""Newspaper §7: the code table, error/warning arrays in every plausible envelope, the typed errors."""

from __future__ import annotations

import httpx
import pytest

from connectors.errors import AuthFailed, NotFound, RateLimited, ServerError
from connectors.newspaper.codes import MESSAGE_CODES, meaning_of
from connectors.newspaper.errors import (
    NewspaperRejected,
    check_response,
    error_for_response,
    messages_in_body,
    parse_message,
)


def test_code_table_expands_every_range() -> None:
    expected = (
        [f"{n:04d}" for n in range(0, 10)]
        + [f"{n:04d}" for n in range(20, 25)]
        + [f"{n:04d}" for n in range(30, 35)]
        + [f"{n:04d}" for n in range(40, 44)]
        + [f"{n:04d}" for n in range(50, 56)]
        + [f"{n:04d}" for n in range(70, 74)]
        + [f"{n:04d}" for n in range(100, 108)]
        + ["0110", "0111", "0150", "0151", "0152", "0153"]
        + [f"{n:04d}" for n in range(170, 178)]
        + ["0200"]
    )
    assert sorted(MESSAGE_CODES) == sorted(expected)
    assert len(set(MESSAGE_CODES.values())) == len(MESSAGE_CODES)
    assert meaning_of("0021") == "locality bundles not possible for this newspaper"
    assert "military copies" in meaning_of("0034")
    assert meaning_of("0177") == "weight range violated for international Priority (contract price)"
    assert meaning_of("9999") == ""
    assert meaning_of(None) == ""


def test_message_code_is_read_from_the_text_or_a_code_field() -> None:
    assert parse_message({"error": "0030 weight 5 not in 10-500", "resource": None}).code == "0030"
    assert parse_message("0008: Issue number to must be greater").code == "0008"
    assert parse_message({"error": "something odd", "code": 2}).code == "0002"
    assert parse_message({"error": "no code here"}).code is None
    assert parse_message({"error": "12345 is not a code"}).code is None
    assert parse_message(42) is None
    message = parse_message({"error": "0151 no country XY", "resource": None})
    assert message.meaning == "no country found for ISO code"
    assert "no country found" in str(message)


@pytest.mark.parametrize(
    "body",
    [
        {"errors": [{"error": "0002 not found", "resource": None}], "warnings": []},
        {"error": [{"error": "0002 not found", "resource": None}]},
        {"errors": ["0002 not found"]},
        {"error": "0002 not found", "resource": None},
        [{"error": "0002 not found", "resource": None}],
        {"messages": [{"type": "ERROR", "error": "0002 not found"}]},
    ],
)
def test_error_envelopes(body: object) -> None:
    found = messages_in_body(body)
    assert [message.code for message in found.errors] == ["0002"]
    assert found.warnings == ()


def test_warnings_are_read_apart_from_errors() -> None:
    found = messages_in_body(
        {
            "id": 7,
            "errors": [],
            "warnings": [{"error": "0152 comment too long (max 80)", "resource": None}, "plain warning"],
        }
    )
    assert found.errors == ()
    assert [message.code for message in found.warnings] == ["0152", None]
    assert found.warnings[1].message == "plain warning"


def test_data_bodies_carry_no_messages() -> None:
    assert messages_in_body({"statusValue": "LOADED"}).errors == ()
    assert messages_in_body([{"zipCode": 3000}]).errors == ()
    assert messages_in_body(12345).errors == ()
    assert messages_in_body("File uploaded").errors == ()


def _response(status: int, **kwargs: object) -> httpx.Response:
    request = httpx.Request("GET", "https://np.test/logistics/newspaper/submission/v1/orders/1/status")
    return httpx.Response(status, request=request, **kwargs)  # type: ignore[arg-type]


def test_http_200_with_errors_is_rejected_with_meaning() -> None:
    response = _response(200, json={"errors": [{"error": "0007 issue number used", "resource": None}]})
    with pytest.raises(NewspaperRejected) as caught:
        check_response(response)
    error = caught.value
    assert error.code == "0007"
    assert error.meaning == "issue number previously used for another issue"
    assert error.remote_message == "0007 issue number used"
    assert error.status_code == 200
    assert error.retryable is False
    assert "/orders/1/status" in str(error)


def test_check_passes_clean_and_non_json_bodies() -> None:
    check_response(_response(200, json={"statusValue": "LOADED", "warnings": ["0152 long"]}))
    check_response(_response(200, content=b"%PDF-1.4 ...", headers={"content-type": "application/pdf"}))
    check_response(_response(200, text="File uploaded"))


def test_4xx_with_messages_is_rejected_not_a_bare_status_error() -> None:
    error = error_for_response(
        _response(400, json={"errors": [{"error": "0005 bad date", "resource": None}]})
    )
    assert isinstance(error, NewspaperRejected)
    assert (error.code, error.status_code) == ("0005", 400)
    coded_403 = error_for_response(_response(403, json={"errors": ["0001 not your newspaper"]}))
    assert isinstance(coded_403, NewspaperRejected)
    assert coded_403.code == "0001"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (401, None, AuthFailed),
        (403, None, AuthFailed),
        (401, {"error": "invalid_token"}, AuthFailed),
        (404, None, NotFound),
        (404, {"detail": "Not Found"}, NotFound),
        (404, {"errors": [{"error": "order 5 not found", "resource": None}]}, NotFound),
        (429, {"errors": ["0000 slow down"]}, RateLimited),
        (503, {"errors": ["0000 down"]}, ServerError),
    ],
)
def test_statuses_without_usable_messages_keep_the_http_mapping(
    status: int, body: object, kind: type
) -> None:
    response = _response(status) if body is None else _response(status, json=body)
    assert type(error_for_response(response)) is kind
