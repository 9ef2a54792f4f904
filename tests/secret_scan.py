"""A scan for credentials in what the flows leave behind: every spelling of every secret (as is, URL-encoded,
JSON-escaped, base64 at any alignment, its head and tail), looked for in text, files (ZIP members and SQLite
tables included) and database rows; and the check of what went over the wire (:func:`wire_findings`).
"""

from __future__ import annotations

import base64
import json
import re
import sqlite3
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, unquote_plus, unquote_to_bytes

PARTIAL_CHARS = 16
# Characters that URL-, form-, JSON- and SQL-quoting leave as they are; a stretch of this many of them in a
# secret is looked for on its own.
UNENCODED = re.compile(r"[A-Za-z0-9_.~-]+")
MIN_STRETCH = 10
SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Secret:
    """One credential: what kind it is (``access token``) and its value."""

    kind: str
    value: str

    def spellings(self) -> dict[str, bytes]:
        """Every way the value may be written down, by name; the same bytes are named once."""
        value = self.value
        raw = value.encode("utf-8")
        found: dict[str, bytes] = {"as is": raw}
        found["URL-encoded"] = quote(value, safe="").encode()
        found["form-encoded"] = quote_plus(value, safe="").encode()
        found["JSON-escaped"] = json.dumps(value)[1:-1].encode()
        for offset in range(3):
            core = base64_core(raw, offset)
            found[f"base64 (offset {offset})"] = core
            found[f"URL-safe base64 (offset {offset})"] = core.replace(b"+", b"-").replace(b"/", b"_")
        found.update(self._partials())
        unique: dict[str, bytes] = {}
        for name, spelling in found.items():
            if spelling and spelling not in unique.values():
                unique[name] = spelling
        return unique

    def _partials(self) -> dict[str, bytes]:
        """Head and tail of a long value (a cut token is still a leak) and its longest stretch that no
        encoding changes; for a JWT its signature and claims, since every JWT's head is alike."""
        parts = self.value.split(".")
        if len(parts) == 3 and all(parts):
            return {"JWT claims": parts[1].encode(), "JWT signature": parts[2].encode()}
        found = {}
        stretch = max(UNENCODED.findall(self.value), key=len, default="")
        if len(stretch) >= MIN_STRETCH:
            found["longest unencoded stretch"] = stretch.encode()
        if len(self.value) >= PARTIAL_CHARS + 8:
            found["first characters"] = self.value[:PARTIAL_CHARS].encode()
            found["last characters"] = self.value[-PARTIAL_CHARS:].encode()
        return found


def base64_core(raw: bytes, offset: int) -> bytes:
    """The base64 characters that encode only ``raw`` when it starts ``offset`` bytes into a 3-byte group:
    found in any base64 text holding ``raw`` at that alignment, whatever surrounds it."""
    encoded = base64.b64encode(b"\x00" * offset + raw)
    start = {0: 0, 1: 2, 2: 3}[offset]
    end = (8 * (offset + len(raw))) // 6
    return encoded[start:end]


def basic_authorization(user: str, password: str) -> str:
    """The ``Authorization`` header value of HTTP Basic for ``user`` and ``password``."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@dataclass(frozen=True)
class Finding:
    """A secret seen where it must not be."""

    store: str
    where: str
    kind: str
    spelling: str

    def __str__(self) -> str:
        return f"{self.store}: {self.kind} ({self.spelling}) in {self.where}"


@dataclass
class StoreCount:
    items: int = 0
    bytes: int = 0


@dataclass
class SecretScan:
    """Looks for every spelling of ``secrets`` in what it is given; keeps the findings and what it read."""

    secrets: Sequence[Secret]
    findings: list[Finding] = field(default_factory=list)
    read: dict[str, StoreCount] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._patterns = [
            (spelling, secret.kind, name)
            for secret in self.secrets
            for name, spelling in secret.spellings().items()
        ]

    def scan(self, store: str, where: str, content: bytes | str, *, allowed: Iterable[str] = ()) -> None:
        """Look through ``content`` (of ``where`` in ``store``), also as percent-decoded, whatever it encoded
        (some writers encode only a few characters); ``allowed``: values that may be there."""
        data = content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content
        count = self.read.setdefault(store, StoreCount())
        count.items += 1
        count.bytes += len(data)
        readings = [data]
        if b"%" in data:
            readings += [unquote_to_bytes(data), unquote_to_bytes(data.replace(b"+", b" "))]
        exempt = {spelling for value in allowed for spelling in Secret("", value).spellings().values()}
        for spelling, kind, name in self._patterns:
            if spelling not in exempt and any(spelling in reading for reading in readings):
                self.findings.append(Finding(store, where, kind, name))

    def scan_file(self, store: str, path: Path, *, allowed: Iterable[str] = ()) -> None:
        """A file's bytes, each member of a ZIP container (xlsx) and each table of a SQLite database."""
        for where, content in file_contents(path):
            self.scan(store, where, content, allowed=allowed)

    def summary(self) -> str:
        return ", ".join(f"{store} {c.items} items / {c.bytes} bytes" for store, c in self.read.items())


def file_contents(path: Path) -> Iterator[tuple[str, bytes]]:
    """``path``'s bytes, and what they hold: ZIP members, SQLite tables (one text line per row)."""
    content = path.read_bytes()
    yield str(path), content
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                yield f"{path}!{name}", archive.read(name)
    if content.startswith(SQLITE_HEADER):
        for table, rows in sqlite_tables(path).items():
            yield f"{path} table {table}", b"\n".join(rows)


def sqlite_tables(path: Path) -> dict[str, list[bytes]]:
    """Every row of every table of a SQLite database (read-only; a live WAL database is read consistently)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    connection.text_factory = bytes
    try:
        tables = [
            name.decode()
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        return {
            table: [row_bytes(row) for row in connection.execute(f'SELECT * FROM "{table}"')]
            for table in tables
        }
    finally:
        connection.close()


def postgres_tables(url: str) -> dict[str, list[bytes]]:
    """Every row of every table of a PostgreSQL database, each as its text form (``row::text``)."""
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table: [
                    row.encode("utf-8", "surrogateescape")
                    for (row,) in connection.execute(text(f'SELECT t::text FROM "{table}" AS t'))
                ]
                for table in inspect(connection).get_table_names()
            }
    finally:
        engine.dispose()


def row_bytes(row: Iterable[Any]) -> bytes:
    """A database row as one line: text and blobs as they are, other values as their text."""
    cells = [cell if isinstance(cell, bytes) else str(cell).encode() for cell in row]
    return b"\x1f".join(cells)


@dataclass(frozen=True)
class WireRecord:
    """One request a sandbox received (see :mod:`tests.e2e.recording_sandbox`)."""

    method: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: str
    status: int | None
    location: str | None
    answer: str | None

    @classmethod
    def from_json(cls, line: str) -> WireRecord:
        data = json.loads(line)
        data["headers"] = tuple((name, value) for name, value in data["headers"])
        return cls(**data)

    @property
    def is_token_request(self) -> bool:
        return self.path.endswith("/OAuth/token")

    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body) if self.is_token_request else {}


# The field of a token request each kind of credential may travel in (RFC 6749 §2.3.1, §4.1.3, §6; RFC 7636).
TOKEN_REQUEST_FIELDS = {
    "client_secret": "client secret",
    "code": "authorization code",
    "code_verifier": "PKCE code verifier",
    "refresh_token": "refresh token",
}
# What a token answer hands out, by its field.
TOKEN_ANSWER_FIELDS = {
    "access_token": "access token",
    "refresh_token": "refresh token",
    "id_token": "ID token",
}


def issued_secrets(records: Iterable[WireRecord]) -> list[Secret]:
    """What the sandbox issued or received as a credential: tokens from token answers, codes from
    authorization redirects, secrets and verifiers from token requests."""
    found: dict[str, Secret] = {}

    def add(kind: str, value: str | None) -> None:
        if value and value not in found:
            found[value] = Secret(kind, value)

    for record in records:
        if record.location and "code=" in record.location:
            for code in parse_qs(record.location.partition("?")[2]).get("code", []):
                add("authorization code", code)
        if not record.is_token_request:
            continue
        for name, values in record.form().items():
            if name in TOKEN_REQUEST_FIELDS:
                for value in values:
                    add(TOKEN_REQUEST_FIELDS[name], value)
        if record.answer and record.status == 200:
            answer = json.loads(record.answer)
            for name, kind in TOKEN_ANSWER_FIELDS.items():
                add(kind, answer.get(name))
    return list(found.values())


def wire_findings(
    records: Iterable[WireRecord], secrets: Sequence[Secret], basic: Mapping[str, str]
) -> list[Finding]:
    """Credentials sent where they must not go: any secret in a URL, in a header other than
    ``Authorization`` or in a body; an ``Authorization`` header other than a known Basic one (``basic``:
    header value -> the API path prefix it belongs to) or ``Bearer`` and an issued access token; in a token
    request, a secret outside the field of its kind."""
    scan = SecretScan(secrets)
    access_tokens = {secret.value for secret in secrets if secret.kind == "access token"}
    problems: list[Finding] = []
    for number, record in enumerate(records, 1):
        where = f"request {number} {record.method} {record.path}"
        url = f"{record.path}?{record.query}"
        scan.scan("URL", where, url + "\n" + unquote_plus(url))
        for name, value in record.headers:
            if name.lower() != "authorization":
                scan.scan(f"{name} header", where, value)
            elif not _authorization_allowed(value, record.path, access_tokens, basic):
                problems.append(Finding("Authorization header", where, "credential", "not one issued for it"))
        if record.is_token_request:
            _check_token_form(record, secrets, where, problems)
        else:
            scan.scan("body", where, record.body + "\n" + unquote_plus(record.body))
    return problems + scan.findings


def _authorization_allowed(value: str, path: str, access_tokens: set[str], basic: Mapping[str, str]) -> bool:
    if value in basic:
        return path.startswith(basic[value])
    scheme, _, token = value.partition(" ")
    return scheme == "Bearer" and token in access_tokens


def _check_token_form(
    record: WireRecord, secrets: Sequence[Secret], where: str, problems: list[Finding]
) -> None:
    """A token request carries each credential in the field of its kind, and nowhere else."""
    for name, values in record.form().items():
        kind = TOKEN_REQUEST_FIELDS.get(name)
        for value in values:
            for secret in secrets:
                if secret.value not in value:
                    continue
                if kind is None or not secret.kind.endswith(kind) or value != secret.value:
                    problems.append(Finding("token request", where, secret.kind, f"in field {name}"))
