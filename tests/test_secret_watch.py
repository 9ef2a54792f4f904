"""The suite's secret watch itself: it lets a secret through only as a form body's client_secret field."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.secret_watch import IssuedTokens, SecretLeak, check_request

SECRET = "sandbox-commerce-secret"


def test_a_form_body_client_secret_passes() -> None:
    request = httpx.Request("POST", "https://auth.test/OAuth/token", data={"client_secret": SECRET, "a": "b"})
    check_request(request, [SECRET])


@pytest.mark.parametrize(
    "request_",
    [
        httpx.Request("POST", "https://auth.test/OAuth/token", params={"client_secret": SECRET}),
        httpx.Request("GET", "https://api.test/x", headers={"X-Client": SECRET}),
        httpx.Request("POST", "https://api.test/x", json={"client_secret": SECRET}),
        httpx.Request("POST", "https://auth.test/OAuth/token", data={"client_id": SECRET}),
    ],
    ids=["query", "header", "json body", "other form field"],
)
def test_a_secret_anywhere_else_is_caught(request_: httpx.Request) -> None:
    with pytest.raises(SecretLeak):
        check_request(request_, [SECRET])


TOKEN = "issued-access-token-0123456789"
REFRESH = "issued-refresh-token-0123456789"
ID_TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJoYW5zIn0.c2lnbmF0dXJlLW9mLXRoZS1pZC10b2tlbg"
PASSWORD = "address-password-1234"
BASIC = httpx.BasicAuth("user", PASSWORD)._auth_header


def _check(request: httpx.Request) -> None:
    check_request(
        request,
        [SECRET],
        passwords=[PASSWORD],
        access_tokens=[TOKEN],
        refresh_tokens=[REFRESH],
        id_tokens=[ID_TOKEN],
    )


@pytest.mark.parametrize(
    "request_",
    [
        httpx.Request("GET", "https://api.test/x", headers={"Authorization": f"Bearer {TOKEN}"}),
        httpx.Request("GET", "https://api.test/x", headers={"Authorization": BASIC}),
        httpx.Request(
            "POST",
            "https://auth.test/OAuth/token",
            data={"grant_type": "refresh_token", "refresh_token": REFRESH, "client_secret": SECRET},
        ),
    ],
    ids=["bearer header", "basic header", "refresh grant"],
)
def test_each_credential_passes_where_its_kind_belongs(request_: httpx.Request) -> None:
    _check(request_)


@pytest.mark.parametrize(
    "request_",
    [
        httpx.Request("GET", "https://api.test/x", params={"access_token": TOKEN}),
        httpx.Request("POST", "https://api.test/x", json={"token": TOKEN}),
        httpx.Request("GET", "https://api.test/x", headers={"Authorization": f"Token {TOKEN}"}),
        httpx.Request("GET", "https://api.test/x", params={"refresh_token": REFRESH}),
        httpx.Request("POST", "https://auth.test/OAuth/token", data={"code": REFRESH}),
        httpx.Request("GET", "https://auth.test/logout", params={"id_token_hint": ID_TOKEN}),
        httpx.Request("GET", f"https://user:{PASSWORD}@api.test/x"),
        httpx.Request("GET", "https://api.test/x", params={"password": PASSWORD}),
        httpx.Request("GET", "https://api.test/x", headers={"X-Auth": BASIC}),
    ],
    ids=[
        "access token in the query",
        "access token in a JSON body",
        "access token under another scheme",
        "refresh token in the query",
        "refresh token in another form field",
        "ID token in the query",
        "password in the URL",
        "password in the query",
        "Basic credential in another header",
    ],
)
def test_each_credential_anywhere_else_is_caught(request_: httpx.Request) -> None:
    with pytest.raises(SecretLeak):
        _check(request_)


def test_tokens_are_learned_from_token_answers() -> None:
    issued = IssuedTokens()
    answer = {"access_token": TOKEN, "refresh_token": REFRESH, "id_token": ID_TOKEN, "token_type": "Bearer"}
    assert issued.learn(json.dumps(answer).encode()) == 3
    assert issued.learn(json.dumps(answer).encode()) == 0
    assert (list(issued.access), list(issued.refresh), list(issued.id)) == ([TOKEN], [REFRESH], [ID_TOKEN])


def test_a_refresh_token_may_be_written_to_a_prefect_block_document_only() -> None:
    body = {"data": {"value": json.dumps({"refresh_token": REFRESH})}, "name": "commerce-sign-in"}
    _check(httpx.Request("POST", "http://127.0.0.1:4200/api/block_documents/", json=body))
    with pytest.raises(SecretLeak):
        _check(httpx.Request("POST", "http://127.0.0.1:4200/api/logs/", json=[{"message": REFRESH}]))


def test_a_password_and_a_client_secret_may_be_written_to_a_prefect_block_document() -> None:
    """The credentials block ``postflows deploy`` saves (Prefect keeps block documents encrypted)."""
    body = {"data": {"address_service_password": PASSWORD, "commerce_client_secret": SECRET}, "name": "c"}
    _check(httpx.Request("POST", "http://127.0.0.1:4200/api/block_documents/", json=body))
    with pytest.raises(SecretLeak):
        _check(httpx.Request("POST", "http://127.0.0.1:4200/api/logs/", json=[{"message": PASSWORD}]))
    with pytest.raises(SecretLeak):
        _check(httpx.Request("POST", "http://127.0.0.1:4200/api/logs/", json=[{"message": SECRET}]))
