"""The secret scan itself: it finds a credential however it was written down, wherever it was stored, and
tells a credential on the wire in its place from one out of place."""

from __future__ import annotations

import base64
import json
import sqlite3
import zipfile
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest

from tests.secret_scan import (
    Secret,
    SecretScan,
    WireRecord,
    basic_authorization,
    issued_secrets,
    wire_findings,
)

PASSWORD = Secret("password", "Canary-Pw/7+x:y@z %25-0f3a9")
TOKEN = Secret("access token", "tok-7MfLQ2xkVb9w0_cRrY3nZpAeUuJdTgHs")
JWT = Secret("ID token", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJoYW5zIiwibm9uY2UiOiJ4In0.c2lnbmF0dXJlLWJ5dGVz")


def _found(secret: Secret, content: bytes | str) -> list[str]:
    scan = SecretScan([secret])
    scan.scan("test", "content", content)
    return [finding.spelling for finding in scan.findings]


@pytest.mark.parametrize("prefix", ["", "u", "us", "use", "user:"])
def test_base64_is_found_at_every_alignment(prefix: str) -> None:
    encoded = base64.b64encode(f"{prefix}{PASSWORD.value} and more".encode())
    assert PASSWORD.value.encode() not in encoded
    assert _found(PASSWORD, b"header " + encoded + b" trailer")


@pytest.mark.parametrize(
    "content",
    [
        quote(PASSWORD.value, safe=""),
        urlencode({"password": PASSWORD.value}),
        json.dumps({"password": PASSWORD.value}),
        base64.urlsafe_b64encode(PASSWORD.value.encode()).decode(),
        basic_authorization("user", PASSWORD.value),
        f"token {TOKEN.value[:16]}…",
        f"…{TOKEN.value[-16:]}",
    ],
    ids=["URL-encoded", "form", "JSON", "URL-safe base64", "Basic header", "head", "tail"],
)
def test_each_spelling_is_found(content: str) -> None:
    secret = TOKEN if content.startswith(("token", "…")) else PASSWORD
    assert _found(secret, content)


def test_a_url_encoding_only_some_characters_is_read_decoded() -> None:
    # How SQLAlchemy writes a password into a database URL: only : @ / % & are encoded.
    url = "postgresql://user:Canary-Pw%2F7+x%3Ay%40z %2525-0f3a9@db.test/history"
    assert PASSWORD.value not in url and quote(PASSWORD.value, safe="") not in url
    assert _found(PASSWORD, url)


def test_the_longest_stretch_no_encoding_changes_is_looked_for() -> None:
    secret = Secret("password", "pw:Canary-LongStretch!")
    assert _found(secret, "password=pw\\x3aCanary-LongStretch\\x21") == ["longest unencoded stretch"]


def test_a_jwt_is_known_by_its_claims_and_signature_not_its_common_head() -> None:
    assert _found(JWT, JWT.value.rsplit(".", 1)[1]) == ["JWT signature"]
    assert not _found(JWT, "eyJhbGciOiJSUzI1NiJ9 starts every such token")


def test_text_without_a_secret_and_an_allowed_value_pass() -> None:
    assert not _found(PASSWORD, "Canary- is only the start of it")
    scan = SecretScan([TOKEN])
    scan.scan("token store", "login.json", json.dumps({"refresh_token": TOKEN.value}), allowed=[TOKEN.value])
    assert not scan.findings and scan.read["token store"].items == 1


def test_files_are_read_with_their_zip_members_and_sqlite_rows(tmp_path: Path) -> None:
    workbook = tmp_path / "results.xlsx"
    with zipfile.ZipFile(workbook, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/sharedStrings.xml", f"<t>{TOKEN.value}</t>" * 50)
    assert TOKEN.value.encode() not in workbook.read_bytes()
    database = tmp_path / "history.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE runs (id INTEGER, error TEXT)")
        connection.execute("INSERT INTO runs VALUES (1, ?)", (f"failed: {PASSWORD.value}",))
    connection.close()
    scan = SecretScan([TOKEN, PASSWORD])
    scan.scan_file("results", workbook)
    scan.scan_file("history", database)
    wheres = {(finding.kind, finding.where.removeprefix(f"{tmp_path}/")) for finding in scan.findings}
    assert ("access token", "results.xlsx!xl/sharedStrings.xml") in wheres
    assert ("password", "history.db table runs") in wheres


def _record(method: str, path: str, *, query: str = "", headers: dict[str, str] | None = None, body: str = "",
            answer: dict[str, str] | None = None, location: str | None = None) -> WireRecord:  # fmt: skip
    return WireRecord(
        method, path, query, tuple((headers or {}).items()), body, 200, location,
        json.dumps(answer) if answer is not None else None,
    )  # fmt: skip


CLIENT_SECRET = Secret("commerce client secret", "Canary-CommSecret/9+t=u&v-7d4b6")
TOKEN_PATH = "/auth/OAuth/token"


def test_tokens_are_read_back_from_token_requests_answers_and_redirects() -> None:
    records = [
        _record(
            "GET", "/auth/OAuth/authorization", location="http://127.0.0.1:1/callback?code=the-code&state=s"
        ),
        _record(
            "POST",
            TOKEN_PATH,
            body=urlencode({"grant_type": "authorization_code", "code": "the-code", "client_secret": "s3"}),
            answer={"access_token": TOKEN.value, "refresh_token": "refresh-1", "id_token": JWT.value},
        ),
    ]
    kinds = {(secret.kind, secret.value) for secret in issued_secrets(records)}
    assert kinds == {
        ("authorization code", "the-code"),
        ("client secret", "s3"),
        ("access token", TOKEN.value),
        ("refresh token", "refresh-1"),
        ("ID token", JWT.value),
    }


def test_credentials_in_their_place_on_the_wire_pass() -> None:
    basic = basic_authorization("user", PASSWORD.value)
    records = [
        _record("GET", "/address/REST/v1/ping", headers={"authorization": basic}),
        _record("GET", "/commerce/x", headers={"authorization": f"Bearer {TOKEN.value}"}),
        _record(
            "POST", TOKEN_PATH, body=urlencode({"grant_type": "x", "client_secret": CLIENT_SECRET.value})
        ),
    ]
    secrets = [PASSWORD, TOKEN, CLIENT_SECRET]
    assert wire_findings(records, secrets, {basic: "/address/REST/v1"}) == []


@pytest.mark.parametrize(
    "record",
    [
        _record("GET", "/commerce/x", query=urlencode({"access_token": TOKEN.value})),
        _record("GET", "/commerce/x", headers={"x-token": TOKEN.value}),
        _record("GET", "/commerce/x", headers={"authorization": "Bearer not-an-issued-token"}),
        _record("GET", "/commerce/x", headers={"authorization": basic_authorization("user", PASSWORD.value)}),
        _record("POST", "/commerce/x", body=json.dumps({"secret": CLIENT_SECRET.value})),
        _record("POST", TOKEN_PATH, body=urlencode({"client_id": CLIENT_SECRET.value})),
    ],
    ids=[
        "token in query",
        "token in header",
        "unknown bearer",
        "Basic elsewhere",
        "secret in body",
        "wrong field",
    ],
)
def test_credentials_out_of_place_on_the_wire_are_found(record: WireRecord) -> None:
    basic = basic_authorization("user", PASSWORD.value)
    assert wire_findings([record], [PASSWORD, TOKEN, CLIENT_SECRET], {basic: "/address/REST/v1"})
