"""NewspaperClient against httpx.MockTransport: paths, scopes per §4, parsing, error and warning handling."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from pydantic import SecretStr

from connectors.errors import AuthFailed, NotFound, ServerError
from connectors.http import ClientOptions, RequestRecord
from connectors.newspaper import (
    NewspaperClient,
    NewspaperRejected,
    OrderInControl,
    OrderInvalid,
    OrderStatus,
    Purchase,
    PurchaseDocumentKind,
    StandardOrder,
    StatisticsRecord,
    StructureFileCode,
    UnexpectedResponse,
)
from connectors.newspaper.errors import DocumentSizeMismatch
from connectors.newspaper.models import GratisOrder
from connectors.oauth import ClientCredentials
from connectors.retry import RetryPolicy

BASE = "https://newspaper.test/api"
TOKEN_URL = "https://auth.test/OAuth/token"
SUB = "/api/logistics/newspaper/submission/v1"
ADDR = "/api/logistics/newspaper/address/v1"
TODAY = dt.date(2030, 6, 15)
PDF = b"%PDF-1.7\nnewspaper\n%%EOF"

Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class Call:
    method: str
    path: str
    scope: str
    body: Any


@dataclass
class FakeNewspaper:
    """Token endpoint issuing one token per scope, plus routes keyed by (method, path)."""

    routes: dict[tuple[str, str], Handler] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    token_scopes: list[str] = field(default_factory=list)

    def route(self, method: str, path: str, handler: Handler | httpx.Response | Any) -> None:
        if isinstance(handler, httpx.Response):
            response = handler
            self.routes[(method, path)] = lambda request: response
        elif callable(handler):
            self.routes[(method, path)] = handler
        else:
            self.routes[(method, path)] = lambda request: httpx.Response(200, json=handler)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if str(request.url) == TOKEN_URL:
            form = parse_qs(request.content.decode())
            scope = form["scope"][0]
            self.token_scopes.append(scope)
            return httpx.Response(
                200, json={"access_token": f"tok:{scope}", "token_type": "Bearer", "expires_in": 600}
            )
        auth = request.headers.get("Authorization", "")
        scope = auth.removeprefix("Bearer tok:")
        body = json.loads(request.content) if request.content else None
        self.calls.append(Call(request.method, request.url.path, scope, body))
        handler = self.routes.get((request.method, request.url.path))
        if handler is None:
            return httpx.Response(404, json={"detail": "Not Found"})
        return handler(request)


@pytest.fixture
def server() -> FakeNewspaper:
    return FakeNewspaper()


@pytest.fixture
async def client(server: FakeNewspaper) -> AsyncIterator[NewspaperClient]:
    async def no_sleep(seconds: float) -> None:
        return None

    client = NewspaperClient(
        BASE,
        today=lambda: TODAY,
        credentials=ClientCredentials(TOKEN_URL, "client", SecretStr("secret"), api="newspaper"),
        options=ClientOptions(
            transport=httpx.MockTransport(server),
            retry=RetryPolicy(max_attempts=3, base_delay=0),
            sleep=no_sleep,
        ),
    )
    yield client
    await client.aclose()


def valid_order() -> StandardOrder:
    return StandardOrder.model_validate(
        {
            "language": "DE",
            "basisInformation": {
                "newspaperNumber": "123",
                "issueNumber": {"from": 4},
                "deliveryDate": "2030-06-20",
            },
            "sender": {"companyName1": "Verlag", "address1": "Weg 1", "zipCode": 3000, "city": "Bern"},
            "nationalDelivery": {"sortedDelivery": {"sortedShipments": [{"weight": 90, "countMailMan": 10}]}},
        }
    )


def valid_purchase() -> Purchase:
    return Purchase.model_validate(
        {
            "title": "t",
            "depositDate": "2030-06-16",
            "offerOption": "NO_PRICE",
            "addresses": [
                {"id": "a1", "lastName": "Muster", "zipCode": 3000, "city": "Bern", "isoCode": "CH"}
            ],
        }
    )


def document_body(content: bytes, mime: str = "PDF", size: int | None = None) -> dict[str, Any]:
    encoded = base64.b64encode(content).decode()
    return {"document": {"mimeType": mime, "size": len(content) if size is None else size, "data": encoded}}


ORDERS = "SENDINGS_NEWSPAPER_SUBMISSION_ORDERS"
ADDRESS = "SENDINGS_NEWSPAPER_ADDRESS"


@pytest.mark.asyncio
async def test_submit_standard_order_posts_the_body_with_the_orders_scope(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route(
        "POST", f"{SUB}/orders/standard", {"id": 4711, "warnings": [{"error": "0152 long", "resource": None}]}
    )
    result = await client.submit_standard_order(valid_order())
    assert result.value == 4711
    assert [warning.code for warning in result.warnings] == ["0152"]
    assert result.warnings[0].meaning == "comment too long (maximum characters given)"
    (call,) = server.calls
    assert (call.method, call.path, call.scope) == ("POST", f"{SUB}/orders/standard", ORDERS)
    assert call.body == valid_order().to_body()
    assert call.body["basisInformation"]["issueNumber"] == {"from": 4}
    assert server.token_scopes == [ORDERS]


@pytest.mark.asyncio
async def test_invalid_order_is_refused_before_anything_is_sent(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    order = valid_order()
    order.basis_information.delivery_date = dt.date(2030, 6, 14)  # type: ignore[union-attr]
    with pytest.raises(OrderInvalid, match=r"basisInformation\.deliveryDate: 2030-06-14 is in the past"):
        await client.submit_standard_order(order)
    assert server.calls == []
    assert server.token_scopes == []


@pytest.mark.asyncio
async def test_http_200_with_errors_raises_rejected_with_meaning(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route(
        "POST",
        f"{SUB}/orders/standard",
        {
            "id": None,
            "errors": [{"error": "0030 weight 90 outside 100-500", "resource": None}],
            "warnings": [],
        },
    )
    with pytest.raises(NewspaperRejected) as caught:
        await client.submit_standard_order(valid_order())
    assert caught.value.code == "0030"
    assert caught.value.meaning == "permitted weight range (grams) violated for district bundles"
    assert len(server.calls) == 1


@pytest.mark.asyncio
async def test_4xx_with_messages_raises_rejected(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route(
        "GET",
        f"{SUB}/newspapers/999/summary",
        httpx.Response(400, json={"errors": [{"error": "0002 newspaper 999 not found", "resource": None}]}),
    )
    with pytest.raises(NewspaperRejected) as caught:
        await client.get_newspaper_summary("999")
    assert (caught.value.code, caught.value.status_code) == ("0002", 400)
    assert len(server.calls) == 1  # not retried


@pytest.mark.asyncio
async def test_submission_is_not_resent_after_a_server_error(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("POST", f"{SUB}/orders/standard", httpx.Response(502))
    with pytest.raises(ServerError):
        await client.submit_standard_order(valid_order())
    assert len(server.calls) == 1


@pytest.mark.asyncio
async def test_reads_are_retried_after_a_server_error(client: NewspaperClient, server: FakeNewspaper) -> None:
    answers = iter([httpx.Response(503), httpx.Response(200, json={"statusValue": "LOADED"})])
    server.route("GET", f"{SUB}/orders/5/status", lambda request: next(answers))
    assert (await client.get_order_status(5)).value.status_value == "LOADED"
    assert len(server.calls) == 2


@pytest.mark.asyncio
async def test_401_without_body_is_auth_failed_after_one_renewal(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("GET", f"{SUB}/orders/5/status", httpx.Response(401))
    with pytest.raises(AuthFailed):
        await client.get_order_status(5)
    assert len(server.calls) == 2
    assert server.token_scopes == [ORDERS, ORDERS]


@pytest.mark.asyncio
async def test_403_is_auth_failed_without_a_renewal(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route("GET", f"{SUB}/orders/5/status", httpx.Response(403))
    with pytest.raises(AuthFailed) as caught:
        await client.get_order_status(5)
    assert caught.value.status_code == 403
    assert len(server.calls) == 1
    assert server.token_scopes == [ORDERS]


@pytest.mark.asyncio
async def test_gratis_order(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route("POST", f"{SUB}/orders/gratis", lambda request: httpx.Response(200, text="812"))
    order = GratisOrder.model_validate({**valid_order().to_body(), "gratisDelivery": {"flex": True}})
    result = await client.submit_gratis_order(order)
    assert result.value == 812
    assert server.calls[0].body["gratisDelivery"] == {"flex": True}
    assert server.calls[0].scope == ORDERS


@pytest.mark.asyncio
async def test_order_status_and_summary_when_not_in_control(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route(
        "GET", f"{SUB}/orders/7/status", {"statusValue": "LOADED", "statusDate": "2030-06-15T08:00:00+02:00"}
    )
    server.route(
        "GET",
        f"{SUB}/orders/7/summary",
        {
            "issueDate": "2030-06-20",
            "issueNumber": {"from": 4},
            "barcodeNumber": "99",
            "totalNewspaper": 10,
            "statusValue": "LOADED",
            "difference": False,
        },
    )
    status = await client.get_order_status(7)
    assert status.value.status_date == dt.datetime(2030, 6, 15, 6, 0, tzinfo=dt.UTC)
    summary = await client.get_order_summary(7)
    assert summary.value.total_newspaper == 10
    assert [call.path for call in server.calls] == [f"{SUB}/orders/7/status"] * 2 + [
        f"{SUB}/orders/7/summary"
    ]
    assert {call.scope for call in server.calls} == {ORDERS}


@pytest.mark.asyncio
async def test_summary_and_sendings_are_never_requested_in_control(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("GET", f"{SUB}/orders/8/status", {"statusValue": "CONTROL"})
    with pytest.raises(OrderInControl):
        await client.get_order_summary(8)
    with pytest.raises(OrderInControl):
        await client.get_order_sendings(8)
    with pytest.raises(OrderInControl):
        await client.get_order_sendings(8, status=OrderStatus(status_value="CONTROL"))
    assert [call.path for call in server.calls] == [f"{SUB}/orders/8/status"] * 2


@pytest.mark.asyncio
async def test_sendings_with_a_known_status_skip_the_status_call(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("GET", f"{SUB}/orders/9/sendings", {"national": [{"count": 1}], "warnings": ["0009 note"]})
    result = await client.get_order_sendings(9, status=OrderStatus(status_value="LOADED"))
    assert result.value.body == {"national": [{"count": 1}], "warnings": ["0009 note"]}
    assert [warning.code for warning in result.warnings] == ["0009"]
    assert [call.path for call in server.calls] == [f"{SUB}/orders/9/sendings"]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("method_name", "leaf"),
    [
        ("get_original_standard_order", "original-standard-order"),
        ("get_corrected_standard_order", "corrected-standard-order"),
        ("get_original_gratis_order", "original-gratis-order"),
        ("get_corrected_gratis_order", "corrected-gratis-order"),
    ],
)
async def test_order_copies_are_kept_raw(
    client: NewspaperClient, server: FakeNewspaper, method_name: str, leaf: str
) -> None:
    body = {"basisInformation": {"newspaperNumber": "123"}, "unknownPart": [1]}
    server.route("GET", f"{SUB}/orders/3/{leaf}", body)
    result = await getattr(client, method_name)(3)
    assert result.value.body == body
    assert server.calls[0].scope == ORDERS


@pytest.mark.asyncio
async def test_delivery_note_as_pdf_and_as_json(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route(
        "GET",
        f"{SUB}/orders/1/delivery-note",
        httpx.Response(200, content=PDF, headers={"content-type": "application/pdf"}),
    )
    server.route("GET", f"{SUB}/orders/2/delivery-note", document_body(PDF, "application/pdf"))
    as_pdf = await client.get_delivery_note(1)
    as_json = await client.get_delivery_note(2)
    assert [document.decoded_bytes() for document in as_pdf.value.documents] == [PDF]
    assert [document.decoded_bytes() for document in as_json.value.documents] == [PDF]
    assert as_json.value.raw is not None


@pytest.mark.asyncio
async def test_delivery_note_can_ask_for_pdf(client: NewspaperClient, server: FakeNewspaper) -> None:
    accepts: list[str] = []

    def note(request: httpx.Request) -> httpx.Response:
        accepts.append(request.headers["Accept"])
        return httpx.Response(200, content=PDF, headers={"content-type": "application/pdf"})

    server.route("GET", f"{SUB}/orders/1/delivery-note", note)
    await client.get_delivery_note(1, prefer_pdf=True)
    await client.get_delivery_note(1)
    assert accepts[0].startswith("application/pdf")
    assert accepts[1].startswith("application/json")


@pytest.mark.asyncio
async def test_newspaper_and_distribution_scopes(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route(
        "GET", f"{SUB}/newspapers/123/summary", {"newspaperNumber": 123, "newspaperID": 5, "title": "Blatt"}
    )
    server.route(
        "GET",
        f"{SUB}/distribution/newspapers/123/distribution-list",
        {"distributionType": ["OFFICIAL_PLUS"], "distributionListDetails": [{"zipCode": 8000, "count": 12}]},
    )
    server.route("GET", f"{SUB}/distribution/newspapers/123/black-list", [{"street": "X"}])
    summary = await client.get_newspaper_summary("123")
    distribution = await client.get_distribution_list(123)
    black_list = await client.get_black_list("123")
    assert summary.value.title == "Blatt"
    assert distribution.value.distribution_list_details[0].count == 12
    assert black_list.value.body == [{"street": "X"}]
    assert [call.scope for call in server.calls] == [
        "SENDINGS_NEWSPAPER_SUBMISSION_NEWSPAPERS",
        "SENDINGS_NEWSPAPER_SUBMISSION_DISTRIBUTION",
        "SENDINGS_NEWSPAPER_SUBMISSION_DISTRIBUTION",
    ]
    assert len(server.token_scopes) == 2  # one token per scope set, reused


@pytest.mark.asyncio
async def test_submit_statistics(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route(
        "POST",
        "/api/logistics/newspaper/statistic/v1/standard/statistics",
        lambda request: httpx.Response(200, text="File was uploaded", headers={"content-type": "text/plain"}),
    )
    record = StatisticsRecord(newspaper_id=5, product="TUESDAY_EDITION", delivery_date=TODAY, count=3, bbz=1)
    result = await client.submit_statistics([record])
    assert result.value == "File was uploaded"
    (call,) = server.calls
    assert call.scope == "SENDINGS_NEWSPAPER_STATISTIC"
    assert call.body == {
        "statistics": [
            {
                "newspaperId": 5,
                "product": "TUESDAY_EDITION",
                "deliveryDate": "2030-06-15",
                "count": 3,
                "bbz": 1,
            }
        ]
    }
    with pytest.raises(OrderInvalid, match=r"statistics\[0\]\.count"):
        await client.submit_statistics(
            [StatisticsRecord(newspaper_id=5, product="X", delivery_date=TODAY, count=0)]
        )


@pytest.mark.asyncio
async def test_statistics_rejection_code_0200(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route(
        "POST",
        "/api/logistics/newspaper/statistic/v1/standard/statistics",
        {"errors": [{"error": "0200 statistics cannot be processed", "resource": None}]},
    )
    record = StatisticsRecord(newspaper_id=5, product="TUESDAY_EDITION", delivery_date=TODAY, count=3)
    with pytest.raises(NewspaperRejected) as caught:
        await client.submit_statistics([record])
    assert caught.value.meaning == "statistics cannot be processed"


@pytest.mark.asyncio
async def test_purchase_and_progress(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route("POST", f"{ADDR}/purchases", 31)
    server.route(
        "GET",
        f"{ADDR}/purchases/31/progress",
        {"validationStatus": "READY", "validationProgressPercent": 100, "sortingStatus": "READY"},
    )
    assert (await client.submit_purchase(valid_purchase())).value == 31
    assert (await client.get_purchase_progress(31)).value.is_ready
    assert [call.scope for call in server.calls] == [ADDRESS, ADDRESS]
    assert server.calls[0].body["offerOption"] == "NO_PRICE"
    bad = valid_purchase()
    bad.addresses[0].zip_code = 30
    with pytest.raises(OrderInvalid, match=r"addresses\[0\]\.zipCode"):
        await client.submit_purchase(bad)


@pytest.mark.asyncio
async def test_output_addresses_fall_back_to_the_other_spelling_and_remember_it(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    body = {"outputAddresses": [{"id": "a1", "statusCode": "OK", "zipCode": 3000, "quantity": 1}]}
    server.route("GET", f"{ADDR}/purchases/31/outputaddresses", body)
    server.route("GET", f"{ADDR}/purchases/32/outputaddresses", body)
    first = await client.get_output_addresses(31)
    second = await client.get_output_addresses(32)
    assert first.value.output_addresses[0].status_code == "OK"
    assert second.value == first.value
    assert [call.path.rsplit("/", 1)[1] for call in server.calls] == [
        "output-addresses",
        "outputaddresses",
        "outputaddresses",
    ]


@pytest.mark.asyncio
async def test_output_addresses_prefer_the_listed_spelling(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("GET", f"{ADDR}/purchases/31/output-addresses", {"outputAddresses": []})
    assert (await client.get_output_addresses(31)).value.output_addresses == []
    assert len(server.calls) == 1


@pytest.mark.asyncio
async def test_output_addresses_404_on_both_spellings_is_not_found(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    with pytest.raises(NotFound):
        await client.get_output_addresses(77)
    assert len(server.calls) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", list(PurchaseDocumentKind))
async def test_every_purchase_document(
    client: NewspaperClient, server: FakeNewspaper, kind: PurchaseDocumentKind
) -> None:
    server.route(
        "GET", f"{ADDR}/purchases/31/document/{kind.value}", document_body(b"content", "application/pdf")
    )
    result = await client.get_purchase_document(31, kind)
    [document] = result.value.documents
    assert document.decoded_bytes() == b"content"
    assert document.extension == ".pdf"
    assert server.calls[0].scope == ADDRESS


@pytest.mark.asyncio
async def test_original_addresses_path_is_spelled_as_in_the_spec(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("GET", f"{ADDR}/purchases/1/document/original-addresse", document_body(b"x"))
    await client.get_purchase_document(1, PurchaseDocumentKind.ORIGINAL_ADDRESSES)
    assert server.calls[0].path.endswith("/document/original-addresse")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("answering", "order"),
    [
        ("original-addresse", ["original-addresse", "original-addresse"]),
        ("original-addresses", ["original-addresse", "original-addresses", "original-addresses"]),
    ],
)
async def test_original_addresses_document_in_either_spelling_and_the_answering_one_is_remembered(
    client: NewspaperClient, server: FakeNewspaper, answering: str, order: list[str]
) -> None:
    for purchase_id in (1, 2):  # the other spelling is answered 404 by the fake
        server.route("GET", f"{ADDR}/purchases/{purchase_id}/document/{answering}", document_body(b"x"))
    first = await client.get_purchase_document(1, PurchaseDocumentKind.ORIGINAL_ADDRESSES)
    second = await client.get_purchase_document(2, PurchaseDocumentKind.ORIGINAL_ADDRESSES)
    assert first.value.documents[0].decoded_bytes() == second.value.documents[0].decoded_bytes() == b"x"
    assert [call.path.rsplit("/", 1)[1] for call in server.calls] == order
    assert server.calls[-1].path == f"{ADDR}/purchases/2/document/{answering}"


@pytest.mark.asyncio
async def test_original_addresses_document_404_on_both_spellings_is_not_found(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    with pytest.raises(NotFound):
        await client.get_purchase_document(77, PurchaseDocumentKind.ORIGINAL_ADDRESSES)
    assert [call.path.rsplit("/", 1)[1] for call in server.calls] == [
        "original-addresse",
        "original-addresses",
    ]


@pytest.mark.asyncio
async def test_each_leaf_remembers_its_own_spelling(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route("GET", f"{ADDR}/purchases/3/outputaddresses", {"outputAddresses": []})
    server.route("GET", f"{ADDR}/purchases/3/document/original-addresse", document_body(b"x"))
    await client.get_output_addresses(3)
    await client.get_purchase_document(3, PurchaseDocumentKind.ORIGINAL_ADDRESSES)
    await client.get_output_addresses(3)
    await client.get_purchase_document(3, PurchaseDocumentKind.ORIGINAL_ADDRESSES)
    assert [call.path.rsplit("/", 1)[1] for call in server.calls] == [
        "output-addresses",
        "outputaddresses",
        "original-addresse",
        "outputaddresses",
        "original-addresse",
    ]


@pytest.mark.asyncio
async def test_a_document_with_one_spelling_is_not_found_after_one_try(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    with pytest.raises(NotFound):
        await client.get_purchase_document(77, PurchaseDocumentKind.SORT_PROTOCOL)
    assert len(server.calls) == 1


@pytest.mark.asyncio
async def test_purchase_document_size_mismatch_and_missing_shape(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("GET", f"{ADDR}/purchases/1/document/sort-protocol", document_body(b"abc", size=4))
    server.route("GET", f"{ADDR}/purchases/1/document/bundle-labels", {"nothing": True})
    result = await client.get_purchase_document(1, PurchaseDocumentKind.SORT_PROTOCOL)
    with pytest.raises(DocumentSizeMismatch):
        result.value.documents[0].decoded_bytes()
    unknown = await client.get_purchase_document(1, PurchaseDocumentKind.BUNDLE_LABELS)
    assert unknown.value.documents == ()
    assert unknown.value.raw is not None and unknown.value.raw.body == {"nothing": True}


@pytest.mark.asyncio
async def test_purchase_document_as_pdf_bytes(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route(
        "GET",
        f"{ADDR}/purchases/1/document/sort-protocol",
        httpx.Response(200, content=PDF, headers={"content-type": "application/pdf"}),
    )
    result = await client.get_purchase_document(1, PurchaseDocumentKind.SORT_PROTOCOL)
    assert [(d.extension, d.decoded_bytes()) for d in result.value.documents] == [(".pdf", PDF)]


@pytest.mark.asyncio
async def test_structure_files_and_email_registration(client: NewspaperClient, server: FakeNewspaper) -> None:
    server.route(
        "GET",
        f"{ADDR}/structurefiles/9",
        {"files": [{"name": "az.zip", "mimeType": "application/zip", "size": 2, "data": "UEs="}]},
    )
    server.route("POST", f"{ADDR}/structurefiles/email", {"accepted": True})
    files = await client.get_structure_files(StructureFileCode.BOTH)
    assert [(d.extension, d.decoded_bytes()) for d in files.value.documents] == [(".zip", b"PK")]
    registered = await client.register_structure_file_email("files@example.ch")
    assert registered.value.body == {"accepted": True}
    assert server.calls[1].body == {"email": "files@example.ch"}
    assert {call.scope for call in server.calls} == {ADDRESS}
    with pytest.raises(ValueError):
        await client.get_structure_files(3)
    with pytest.raises(OrderInvalid, match="email"):
        await client.register_structure_file_email("not an address")


@pytest.mark.asyncio
async def test_unexpected_shapes_raise_unexpected_response(
    client: NewspaperClient, server: FakeNewspaper
) -> None:
    server.route("GET", f"{SUB}/orders/1/status", ["not", "a", "status"])
    server.route("POST", f"{ADDR}/purchases", {"something": "else"})
    with pytest.raises(UnexpectedResponse):
        await client.get_order_status(1)
    with pytest.raises(UnexpectedResponse):
        await client.submit_purchase(valid_purchase())


@pytest.mark.asyncio
async def test_request_log_and_repr_carry_no_secrets(server: FakeNewspaper) -> None:
    records: list[RequestRecord] = []
    server.route("GET", f"{SUB}/orders/1/status", {"statusValue": "LOADED"})
    async with NewspaperClient(
        BASE,
        credentials=ClientCredentials(TOKEN_URL, "client", SecretStr("very-secret"), api="newspaper"),
        options=ClientOptions(transport=httpx.MockTransport(server), request_log=records.append),
    ) as client:
        await client.get_order_status(1)
        assert "very-secret" not in repr(client)
    assert [(r.method, r.path, r.status_code) for r in records] == [
        ("GET", f"{SUB.removeprefix('/api')}/orders/1/status", 200)
    ]


def test_client_needs_credentials() -> None:
    with pytest.raises(TypeError, match="credentials"):
        NewspaperClient(BASE)  # type: ignore[call-arg]
