"""Helpers shared by the newspaper sandbox tests (clock, token, order bodies, PDF check) and their tests."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from sandbox.config import NEWSPAPER_SCOPES, SandboxConfig
from sandbox.inprocess import SandboxTransport, newspaper_url, token_url
from sandbox.newspaper.pdf import document_body, render_pdf

SUBMISSION = f"{newspaper_url()}/logistics/newspaper/submission/v1"
ORDERS = f"{SUBMISSION}/orders"
ADDRESS = f"{newspaper_url()}/logistics/newspaper/address/v1"
PURCHASES = f"{ADDRESS}/purchases"
STATISTICS = f"{newspaper_url()}/logistics/newspaper/statistic/v1/standard/statistics"
ZURICH = ZoneInfo("Europe/Zurich")
START = datetime(2025, 6, 16, 9, 0, tzinfo=ZURICH)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start.timestamp()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def today(self) -> date:
        return datetime.fromtimestamp(self.now, ZURICH).date()


def sandbox(**settings: Any) -> tuple[SandboxConfig, FakeClock]:
    """A config on a fake clock (jobs of 10 s unless told otherwise)."""
    clock = FakeClock()
    settings.setdefault("job_seconds", 10.0)
    return SandboxConfig(clock=clock, **settings), clock


async def grant_token(
    http: httpx.AsyncClient,
    scopes: tuple[str, ...] | list[str] = NEWSPAPER_SCOPES,
    client_id: str = "sandbox-client",
    secret: str = "sandbox-secret",
) -> str:
    response = await http.post(
        token_url(),
        data={
            "client_id": client_id,
            "client_secret": secret,
            "scope": " ".join(scopes),
            "grant_type": "client_credentials",
        },
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


@asynccontextmanager
async def authorised_client(
    config: SandboxConfig, scopes: tuple[str, ...] | list[str] = NEWSPAPER_SCOPES
) -> AsyncIterator[httpx.AsyncClient]:
    """An open HTTP client on the in-process sandbox carrying a token for ``scopes``."""
    async with httpx.AsyncClient(transport=SandboxTransport(config)) as http:
        http.headers["Authorization"] = f"Bearer {await grant_token(http, scopes)}"
        yield http


def codes(body: dict[str, Any], key: str = "errors") -> list[str]:
    """The message codes of the envelope's ``errors`` or ``warnings``."""
    for item in body[key]:
        assert set(item) == {"error", "resource"} and item["resource"] is None
    return [item["error"][:4] for item in body[key]]


def standard_order(clock: FakeClock, **basis: Any) -> dict[str, Any]:
    """A standard order for newspaper 4711 that the sandbox accepts as it is."""
    return {
        "language": "DE",
        "basisInformation": {
            "newspaperNumber": "4711",
            "issueNumber": {"from": 24},
            "lateDelivery": False,
            "deliveryDate": (clock.today() + timedelta(days=2)).isoformat(),
            "differenceEmails": ["diff@example.com"],
            "confirmationEmails": ["ok@example.com"],
            **basis,
        },
        "sender": {
            "companyName1": "Seetal Medien AG",
            "address1": "Hauptstrasse 1",
            "zipCode": 6280,
            "city": "Hochdorf",
        },
        "nationalDelivery": {
            "sortedDelivery": {
                "sortedShipments": [
                    {
                        "weight": 180,
                        "countMailMan": 900,
                        "countCity": 120,
                        "countRest": 30,
                        "shipmentRemark": "Ausgabe 24",
                    }
                ]
            }
        },
        "internationalDelivery": {
            "internationalShipments": [
                {
                    "productLabel": "PRESSE_INT",
                    "country": "DE",
                    "contractPrice": False,
                    "priorityShipments": [],
                    "economyShipments": [{"weight": 180, "count": 12, "shipmentRemark": ""}],
                }
            ]
        },
    }


def gratis_order(
    clock: FakeClock, number: str = "5120", shipments: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    order = standard_order(clock, newspaperNumber=number)
    del order["nationalDelivery"], order["internationalDelivery"]
    order["gratisDelivery"] = {
        "gratisShipments": shipments
        if shipments is not None
        else [{"locationCategory": "A", "weight": 90, "count": 2930}, {"locationCategory": "B", "weight": 90}]
    }
    return order


_OBJ = re.compile(rb"(\d+) 0 obj\n")


def pdf_text(content: bytes) -> list[str]:
    """Check ``content`` is a well-formed single-revision PDF (header, xref offsets, stream length, trailer)
    and return the text shown with ``Tj``."""
    assert content.startswith(b"%PDF-1.")
    assert content.rstrip().endswith(b"%%EOF")
    start = re.search(rb"startxref\n(\d+)\n%%EOF\s*$", content)
    assert start, "no startxref"
    xref_at = int(start.group(1))
    assert content[xref_at:].startswith(b"xref\n")
    header = re.match(rb"xref\n0 (\d+)\n", content[xref_at:])
    assert header
    count = int(header.group(1))
    table = content[xref_at + header.end() :]
    entries = [table[i * 20 : (i + 1) * 20] for i in range(count)]
    assert entries[0] == b"0000000000 65535 f \n"
    for number, entry in enumerate(entries[1:], start=1):
        assert re.fullmatch(rb"\d{10} 00000 n \n", entry), entry
        offset = int(entry[:10])
        found = _OBJ.match(content, offset)
        assert found and int(found.group(1)) == number, f"object {number} not at {offset}"
    trailer = content[xref_at + header.end() + 20 * count :]
    assert trailer.startswith(b"trailer\n") and b"/Root 1 0 R" in trailer and b"/Size %d" % count in trailer
    stream = re.search(rb"/Length (\d+) >>\nstream\n", content)
    assert stream
    length = int(stream.group(1))
    assert content[stream.end() + length :].startswith(b"\nendstream")
    body = content[stream.end() : stream.end() + length]
    return [
        re.sub(rb"\\(.)", rb"\1", m).decode("latin-1") for m in re.findall(rb"\(((?:\\.|[^\\)])*)\) Tj", body)
    ]


def decode_document(body: dict[str, Any], mime_type: str | None = None) -> list[str]:
    """Decode a ``{document{...}}`` body, check size and PDF, return its text lines."""
    import base64

    document = body["document"]
    assert set(document) == {"mimeType", "size", "data"}
    if mime_type is not None:
        assert document["mimeType"] == mime_type
    content = base64.b64decode(document["data"], validate=True)
    assert document["size"] == len(content)
    return pdf_text(content)


def test_rendered_pdf_is_well_formed_and_keeps_the_text() -> None:
    lines = ["Delivery note (copy)", "Back\\slash", "Zürich 8000"]
    assert pdf_text(render_pdf(lines)) == lines


def test_pdf_check_notices_a_shifted_object() -> None:
    content = render_pdf(["one line"]).replace(b"1 0 obj", b" 1 0 obj", 1)
    with pytest.raises(AssertionError):
        pdf_text(content)


def test_document_body_reports_decoded_size() -> None:
    content = render_pdf(["x"])
    assert decode_document(document_body(content, "PDF"), "PDF") == ["x"]
