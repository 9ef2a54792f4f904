"""The process's secret scrubber: every registered secret in every spelling, wherever an error, a quoted body
or a token response would carry it."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

import httpx
import pytest
from pydantic import SecretStr

from connectors.auth import basic_auth
from connectors.errors import ApiError, error_for_http_status, quote_body
from connectors.oauth import read_token_response
from core.errors import PostflowsError
from core.redaction import REDACTED, SecretScrubber, StreamScrubber, redact, register_secret, spellings

PASSWORD = "Short pw/+:@ 42"  # under 32 characters and with a space: no pattern takes it for a credential


@pytest.fixture
def scrubber() -> SecretScrubber:
    fresh = SecretScrubber()
    fresh.register(PASSWORD)
    return fresh


@pytest.mark.parametrize(
    "spelling",
    [
        PASSWORD,
        quote(PASSWORD, safe=""),
        quote_plus(PASSWORD),
        json.dumps(PASSWORD)[1:-1],
        base64.b64encode(PASSWORD.encode()).decode(),
        base64.urlsafe_b64encode(PASSWORD.encode()).decode(),
    ],
)
def test_a_registered_secret_is_found_in_every_spelling(scrubber: SecretScrubber, spelling: str) -> None:
    assert (
        scrubber.scrub(f"the service said {spelling}; try again") == f"the service said {REDACTED}; try again"
    )


def test_basic_credentials_are_found_as_the_header_carries_them() -> None:
    scrubber = SecretScrubber()
    scrubber.register_basic("tech", PASSWORD)
    header = "Basic " + base64.b64encode(f"tech:{PASSWORD}".encode()).decode()
    scrubbed = scrubber.scrub(f"echo: {header}")
    assert scrubbed == f"echo: Basic {REDACTED}", scrubbed
    # inside a longer base64 text too (a body quoted as base64)
    blob = base64.b64encode(f"xx{PASSWORD}yyyy".encode()).decode()
    assert REDACTED in scrubber.scrub(blob)


def test_a_secret_cut_off_at_the_end_of_a_text_is_still_removed(scrubber: SecretScrubber) -> None:
    assert scrubber.scrub(f"password {PASSWORD[:9]}") == f"password {REDACTED}"
    assert scrubber.scrub(f"password {PASSWORD[:9]}…") == f"password {REDACTED}…"
    assert scrubber.scrub("password Shor") == "password Shor"  # too short a piece to tell from text


def test_a_value_too_short_to_tell_from_text_is_not_matched() -> None:
    scrubber = SecretScrubber()
    scrubber.register("pw")
    assert scrubber.scrub("pwd: pw") == "pwd: pw"


def test_the_patterns_apply_only_when_asked(scrubber: SecretScrubber) -> None:
    text = 'access_token="abc" and ' + "a1" * 20
    assert scrubber.scrub(text) == text
    assert scrubber.scrub(text, patterns=True) == f"access_token={REDACTED} and {REDACTED}"


def test_issued_tokens_are_kept_newest_first_up_to_the_limit() -> None:
    scrubber = SecretScrubber()
    for number in range(300):
        scrubber.register(f"token-{number:04d}", issued=True)
    assert scrubber.scrub("token-0299 token-0000") == f"{REDACTED} token-0000"


def test_every_error_of_ours_is_scrubbed_as_it_is_made() -> None:
    register_secret(PASSWORD)
    error = ApiError(f"HTTP 400: invalid login tech password {PASSWORD}", api="x")
    assert PASSWORD not in str(error) and str(error).endswith(REDACTED)
    assert PASSWORD not in str(PostflowsError("a", f"b {PASSWORD}").args)


def test_basic_auth_registers_the_password_it_is_given() -> None:
    basic_auth("tech", SecretStr("Given-Basic-Pw 77"))
    assert (
        redact("invalid login tech password Given-Basic-Pw 77") == f"invalid login tech password {REDACTED}"
    )


def test_an_http_400_quoting_the_password_becomes_an_error_without_it() -> None:
    basic_auth("tech", SecretStr(PASSWORD))
    request = httpx.Request("POST", "https://service.example.test/REST/v1/uploadfile")
    body = f"invalid login tech password {PASSWORD}\n\n(password  {PASSWORD})"
    response = httpx.Response(400, text=body, request=request)
    error = error_for_http_status(response, api="address-service")
    assert PASSWORD not in str(error) and "invalid login tech password [redacted]" in str(error)
    assert PASSWORD not in quote_body(body.replace(" ", "\n"))


def test_the_tokens_of_a_token_response_are_registered() -> None:
    request = httpx.Request("POST", "https://auth.example.test/OAuth/token")
    answer = {"access_token": "issued-access-7", "refresh_token": "issued-refresh-8", "token_type": "Bearer"}
    read_token_response(httpx.Response(200, json=answer, request=request), api="x", what="y", redact=redact)
    assert redact("issued-access-7 / issued-refresh-8") == f"{REDACTED} / {REDACTED}"


def test_kept_bytes_lose_a_secret_in_text_and_json_spellings(scrubber: SecretScrubber) -> None:
    answer = json.dumps({"echo": PASSWORD, "header": f"Basic {PASSWORD}", "name": "Müller"}).encode()
    scrubbed = json.loads(scrubber.scrub_bytes(answer))
    assert scrubbed == {"echo": REDACTED, "header": f"Basic {REDACTED}", "name": "Müller"}
    token = "tok-4f9a1c2e7b"
    scrubber.register(token, issued=True)
    assert scrubber.scrub_bytes(f"Bearer {token}\n".encode()) == f"Bearer {REDACTED}\n".encode()


def test_binary_bytes_change_only_where_a_secret_occurs_literally(scrubber: SecretScrubber) -> None:
    binary = b"%PDF-1.7\n\xff\xfe\x00\x80 stream \xc3\x28 endstream\n"
    assert scrubber.scrub_bytes(binary) is binary
    leaked = binary + PASSWORD.encode() + b"\n%%EOF\n"
    assert scrubber.scrub_bytes(leaked) == binary + REDACTED.encode() + b"\n%%EOF\n"


def test_bytes_pass_untouched_while_nothing_is_registered() -> None:
    data = f"{PASSWORD} \xe9".encode("latin-1")
    assert SecretScrubber().scrub_bytes(data) is data


def _streamed(scrubber: SecretScrubber, data: bytes, size: int) -> bytes:
    stream = StreamScrubber(scrubber)
    parts = [stream.feed(data[start : start + size]) for start in range(0, len(data), size)]
    return b"".join(parts) + stream.finish()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 16, 64, 4096])
def test_a_stream_loses_a_secret_cut_by_any_chunk_boundary(scrubber: SecretScrubber, size: int) -> None:
    token = "tok-4f9a1c2e7b"
    scrubber.register(token, issued=True)
    spelled = quote(PASSWORD, safe="")
    data = (
        f"1;Müller;{PASSWORD};{spelled}\n2;Bahnhofstrasse;{token}{token}\n".encode()
        + b"\xff\xfe binary \xc3\x28 "
        + f"Basic {base64.b64encode(PASSWORD.encode()).decode()}\nlast;{PASSWORD}".encode()
    )
    streamed = _streamed(scrubber, data, size)
    assert streamed == scrubber.scrub_bytes(data)
    assert PASSWORD.encode() not in streamed and token.encode() not in streamed
    assert spelled.encode() not in streamed and streamed.count(REDACTED.encode()) == 6


def test_a_stream_holds_back_no_more_than_the_longest_spelling(scrubber: SecretScrubber) -> None:
    stream = StreamScrubber(scrubber)
    longest = max(len(spelling.encode()) for spelling in spellings(PASSWORD))
    written = stream.feed(b"x" * 10_000)
    assert len(written) == 10_000 - (longest - 1)
    assert written + stream.finish() == b"x" * 10_000
    untouched = StreamScrubber(SecretScrubber())  # nothing registered: chunks pass as they are
    assert untouched.feed(b"abc") == b"abc" and untouched.finish() == b""
