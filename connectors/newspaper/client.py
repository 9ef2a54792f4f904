"""The newspaper API client: one async method per §4 endpoint, each with the OAuth scope of its group.

Every response body is evaluated for error and warning arrays; successful calls return an
:class:`ApiResult` with the warnings. An order or purchase answered 2xx with its id was taken, errors or
not (§7: 200 is not success by itself, nor is an error a refusal by itself): its id comes back with the
errors and warnings. An answer carrying documents (delivery note, purchase documents,
structure files) is read as a download: no further than the base64 text of the largest document accepted
could be long, with a download's deadline. Submissions are validated first and are POSTs that the HTTP core
never re-sends after an ambiguous failure. Purchase paths the spec spells two ways are tried in both
spellings (:data:`PURCHASE_PATH_SPELLINGS`), and the one that answered is asked first from then on.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from connectors.errors import ApiError, NotFound
from connectors.http import ApiClient, ClientOptions, RequestTraits, ResponseCheck
from connectors.jsontext import json_of
from connectors.limits import DOCUMENT_MAX_BYTES, document_answer_limit
from connectors.newspaper import validation
from connectors.newspaper.documents import (
    DocumentSet,
    RawResponse,
    document_from_body,
    document_set_from_response,
)
from connectors.newspaper.errors import (
    API,
    FieldProblem,
    NewspaperMessage,
    OrderInControl,
    UnexpectedResponse,
    check_confirmed,
    check_created,
    check_response,
    error_for_response,
    id_in_response,
    messages_in_response,
)
from connectors.newspaper.models import (
    ApiResult,
    DistributionList,
    GratisOrder,
    NewspaperSummary,
    OrderStatus,
    OrderSummary,
    OutputAddresses,
    Purchase,
    PurchaseDocumentKind,
    PurchaseProgress,
    Scope,
    StandardOrder,
    StatisticsRecord,
    StatisticsSubmission,
    StructureFileCode,
)
from connectors.oauth import ClientCredentials, OAuth2ClientCredentialsAuth
from connectors.validation import email_problem
from core.swiss_time import swiss_today

SUBMISSION = "/logistics/newspaper/submission/v1"
STATISTIC = "/logistics/newspaper/statistic/v1"
ADDRESS = "/logistics/newspaper/address/v1"
# Purchase path leaves whose spelling §4.5 leaves open, with the spellings tried in this order: the output
# addresses (listed as output-addresses, one example has outputaddresses) and the document of the uploaded
# addresses (listed as original-addresse, "spelled so in the list").
PURCHASE_PATH_SPELLINGS: dict[str, tuple[str, ...]] = {
    "output-addresses": ("output-addresses", "outputaddresses"),
    "document/original-addresse": ("document/original-addresse", "document/original-addresses"),
}

M = TypeVar("M", bound=BaseModel)


class NewspaperClient(ApiClient):
    """Async client of the newspaper Online Services API.

    Args:
        base_url: ``{newspaper_base_url}``; the §4 paths are appended to it.
        credentials: the registered client and its token cache (share one to share the cache).
        today: today's date for validation (tests pass a fixed one).
        document_max_bytes: the largest document accepted; an answer carrying documents is read no
            further than its base64 text could be long (:func:`~connectors.limits.document_answer_limit`).
        structure_file_email_field: the field of the structure-file e-mail body (not shown by the spec:
            the guess ``newspaper.structure-file-email-body``).
        options: how the service is reached (:class:`~connectors.http.ClientOptions`).
    """

    api_name: ClassVar[str] = API

    def __init__(
        self,
        base_url: str,
        *,
        credentials: ClientCredentials,
        today: Callable[[], dt.date] = swiss_today,
        document_max_bytes: int = DOCUMENT_MAX_BYTES,
        structure_file_email_field: str = "email",
        options: ClientOptions | None = None,
    ) -> None:
        super().__init__(base_url, options=options)
        self.credentials = credentials
        self._today = today
        self._document_traits = RequestTraits(
            transfer=True, body_limit=document_answer_limit(document_max_bytes)
        )
        self._auth_by_scope = {scope: OAuth2ClientCredentialsAuth(credentials, [scope]) for scope in Scope}
        self._answered_spelling: dict[str, str] = {}
        self._email_field = structure_file_email_field

    @property
    def structure_file_email_field(self) -> str:
        """The field of the structure-file e-mail body that carries the address (the spec shows none)."""
        return self._email_field

    async def __aenter__(self) -> NewspaperClient:
        return self

    def __repr__(self) -> str:
        return f"NewspaperClient(base_url={self.base_url!r}, credentials={self.credentials!r})"

    def error_for_response(self, response: httpx.Response) -> ApiError:
        return error_for_response(response)

    # --- 4.1 orders ----------------------------------------------------------------------------------

    async def submit_standard_order(self, order: StandardOrder) -> ApiResult[int]:
        """POST orders/standard after validation; returns the order id, with the errors of an answer that
        took the order all the same."""
        validation.ensure_valid("standard order", validation.check_standard_order(order, today=self._today()))
        response = await self._create(f"{SUBMISSION}/orders/standard", Scope.ORDERS, order.to_body())
        return _created(response)

    async def submit_gratis_order(self, order: GratisOrder) -> ApiResult[int]:
        """POST orders/gratis after validation of the fields it shares with the standard order; returns the
        order id, with the errors of an answer that took the order all the same."""
        validation.ensure_valid("gratis order", validation.check_gratis_order(order, today=self._today()))
        response = await self._create(f"{SUBMISSION}/orders/gratis", Scope.ORDERS, order.to_body())
        return _created(response)

    async def get_delivery_note(self, order_id: int, *, prefer_pdf: bool = False) -> ApiResult[DocumentSet]:
        """The delivery note, accepted both as PDF bytes and as JSON with document shapes.

        ``prefer_pdf`` asks for the PDF itself through ``Accept``; either answer is understood.
        """
        accept = (
            "application/pdf, application/json;q=0.9"
            if prefer_pdf
            else "application/json, application/pdf;q=0.9"
        )
        path = _order_path(order_id, "delivery-note")
        response = await self._documents("GET", path, Scope.ORDERS, headers={"Accept": accept})
        return self._result(response, document_set_from_response(response))

    async def get_order_status(self, order_id: int) -> ApiResult[OrderStatus]:
        response = await self._call("GET", _order_path(order_id, "status"), Scope.ORDERS)
        return self._result(response, _parse(OrderStatus, response))

    async def get_order_summary(
        self, order_id: int, *, status: OrderStatus | None = None
    ) -> ApiResult[OrderSummary]:
        """The order summary; never requested while the status (given or fetched) is CONTROL."""
        warnings = await self._ensure_not_in_control(order_id, status, "summary")
        response = await self._call("GET", _order_path(order_id, "summary"), Scope.ORDERS)
        result = self._result(response, _parse(OrderSummary, response))
        return ApiResult(result.value, warnings + result.warnings)

    async def get_order_sendings(
        self, order_id: int, *, status: OrderStatus | None = None
    ) -> ApiResult[RawResponse]:
        """National, international and gratis items; never requested while the status is CONTROL."""
        warnings = await self._ensure_not_in_control(order_id, status, "sendings")
        response = await self._call("GET", _order_path(order_id, "sendings"), Scope.ORDERS)
        return ApiResult(RawResponse.from_response(response), warnings + _warnings(response))

    async def get_original_standard_order(self, order_id: int) -> ApiResult[RawResponse]:
        return await self._raw(_order_path(order_id, "original-standard-order"), Scope.ORDERS)

    async def get_corrected_standard_order(self, order_id: int) -> ApiResult[RawResponse]:
        return await self._raw(_order_path(order_id, "corrected-standard-order"), Scope.ORDERS)

    async def get_original_gratis_order(self, order_id: int) -> ApiResult[RawResponse]:
        return await self._raw(_order_path(order_id, "original-gratis-order"), Scope.ORDERS)

    async def get_corrected_gratis_order(self, order_id: int) -> ApiResult[RawResponse]:
        return await self._raw(_order_path(order_id, "corrected-gratis-order"), Scope.ORDERS)

    # --- 4.2 / 4.3 newspapers and distribution ------------------------------------------------------

    async def get_newspaper_summary(self, newspaper_number: str | int) -> ApiResult[NewspaperSummary]:
        path = f"{SUBMISSION}/newspapers/{_segment(newspaper_number)}/summary"
        response = await self._call("GET", path, Scope.NEWSPAPERS)
        return self._result(response, _parse(NewspaperSummary, response))

    async def get_distribution_list(self, newspaper_number: str | int) -> ApiResult[DistributionList]:
        path = f"{SUBMISSION}/distribution/newspapers/{_segment(newspaper_number)}/distribution-list"
        response = await self._call("GET", path, Scope.DISTRIBUTION)
        return self._result(response, _parse(DistributionList, response))

    async def get_black_list(self, newspaper_number: str | int) -> ApiResult[RawResponse]:
        path = f"{SUBMISSION}/distribution/newspapers/{_segment(newspaper_number)}/black-list"
        return await self._raw(path, Scope.DISTRIBUTION)

    # --- 4.4 statistics -----------------------------------------------------------------------------

    async def submit_statistics(
        self, statistics: StatisticsSubmission | Sequence[StatisticsRecord]
    ) -> ApiResult[str]:
        """POST the statistics after validation; returns the service's plain-string confirmation. A 2xx
        answer with errors fails without proving that nothing was kept (it has no id to show)."""
        if not isinstance(statistics, StatisticsSubmission):
            statistics = StatisticsSubmission(statistics=list(statistics))
        validation.ensure_valid("statistics", validation.check_statistics(statistics))
        path = f"{STATISTIC}/standard/statistics"
        response = await self._call(
            "POST", path, Scope.STATISTIC, check=check_confirmed, json=statistics.to_body()
        )
        return self._result(response, _plain_text(response))

    # --- 4.5 purchases and structure files ----------------------------------------------------------

    async def submit_purchase(self, purchase: Purchase) -> ApiResult[int]:
        """POST a purchase (address validation and sorting) after validation; returns the purchase id, with
        the errors of an answer that took the purchase all the same."""
        validation.ensure_valid("purchase", validation.check_purchase(purchase, today=self._today()))
        response = await self._create(f"{ADDRESS}/purchases", Scope.ADDRESS, purchase.to_body())
        return _created(response)

    async def get_purchase_progress(self, purchase_id: int) -> ApiResult[PurchaseProgress]:
        response = await self._call("GET", _purchase_path(purchase_id, "progress"), Scope.ADDRESS)
        return self._result(response, _parse(PurchaseProgress, response))

    async def get_output_addresses(self, purchase_id: int) -> ApiResult[OutputAddresses]:
        """Output addresses, from whichever of the two spellings of the path answers."""
        response = await self._get_purchase_leaf(purchase_id, "output-addresses")
        return self._result(response, _parse(OutputAddresses, response))

    async def get_purchase_document(
        self, purchase_id: int, kind: PurchaseDocumentKind
    ) -> ApiResult[DocumentSet]:
        """One of the seven purchase documents: the §2.7 document shape, or the document bytes themselves.

        A JSON answer without a usable document shape comes back as its raw body with no documents.
        """
        kind = PurchaseDocumentKind(kind)
        response = await self._get_purchase_leaf(
            purchase_id, f"document/{kind.value}", traits=self._document_traits
        )
        raw = RawResponse.from_response(response)
        if not raw.is_json:
            return self._result(response, document_set_from_response(response))
        document = document_from_body(raw.body)
        return self._result(response, DocumentSet(documents=(document,) if document else (), raw=raw))

    async def get_structure_files(self, file_code: StructureFileCode | int) -> ApiResult[DocumentSet]:
        """The structure files for fileCode 1 (AZ/GZA), 2 (AZA/AZB) or 9 (both)."""
        code = StructureFileCode(file_code)
        response = await self._documents("GET", f"{ADDRESS}/structurefiles/{code.value}", Scope.ADDRESS)
        return self._result(response, document_set_from_response(response))

    async def register_structure_file_email(self, email: str) -> ApiResult[RawResponse]:
        """Make ``email`` the recipient of notices about new structure file versions.

        The body is not shown in the spec; ``{"<structure_file_email_field>": ...}`` is sent (``email``
        unless the client was told another field).
        """
        if problem := email_problem(email):
            validation.ensure_valid("structure file e-mail", [FieldProblem("email", problem)])
        response = await self._call(
            "POST",
            f"{ADDRESS}/structurefiles/email",
            Scope.ADDRESS,
            check=check_confirmed,
            json={self._email_field: email},
        )
        return ApiResult(RawResponse.from_response(response), _warnings(response))

    # --- plumbing -----------------------------------------------------------------------------------

    async def _call(
        self, method: str, path: str, scope: Scope, *, check: ResponseCheck = check_response, **kwargs: Any
    ) -> httpx.Response:
        return await self.request(method, path, check=check, auth=self._auth_by_scope[scope], **kwargs)

    async def _create(self, path: str, scope: Scope, body: dict[str, Any]) -> httpx.Response:
        """POST that creates an order or purchase: a 2xx answer with its id passes, errors or not."""
        return await self._call("POST", path, scope, check=check_created, json=body)

    async def _documents(self, method: str, path: str, scope: Scope, **kwargs: Any) -> httpx.Response:
        """A call whose answer carries documents: read as a download, within the document limit."""
        return await self._call(method, path, scope, traits=self._document_traits, **kwargs)

    async def _get_purchase_leaf(self, purchase_id: int, leaf: str, **kwargs: Any) -> httpx.Response:
        """GET ``leaf`` of a purchase in each spelling of :data:`PURCHASE_PATH_SPELLINGS` until one is not a
        404, the spelling that answered last time first; that spelling is remembered for ``leaf``.
        ``kwargs`` go with each request.

        Raises:
            NotFound: every spelling answered 404 (the last one's error).
        """
        spellings = PURCHASE_PATH_SPELLINGS.get(leaf, (leaf,))
        answered = self._answered_spelling.get(leaf)
        if answered is not None:
            spellings = (answered, *(spelling for spelling in spellings if spelling != answered))
        for spelling in spellings[:-1]:
            try:
                response = await self._call(
                    "GET", _purchase_path(purchase_id, spelling), Scope.ADDRESS, **kwargs
                )
            except NotFound:
                continue
            self._answered_spelling[leaf] = spelling
            return response
        response = await self._call(
            "GET", _purchase_path(purchase_id, spellings[-1]), Scope.ADDRESS, **kwargs
        )
        self._answered_spelling[leaf] = spellings[-1]
        return response

    async def _raw(self, path: str, scope: Scope) -> ApiResult[RawResponse]:
        response = await self._call("GET", path, scope)
        return ApiResult(RawResponse.from_response(response), _warnings(response))

    async def _ensure_not_in_control(
        self, order_id: int, status: OrderStatus | None, endpoint: str
    ) -> tuple[NewspaperMessage, ...]:
        warnings: tuple[NewspaperMessage, ...] = ()
        if status is None:
            fetched = await self.get_order_status(order_id)
            status, warnings = fetched.value, fetched.warnings
        if status.in_control:
            raise OrderInControl(order_id, endpoint)
        return warnings

    @staticmethod
    def _result(response: httpx.Response, value: Any) -> ApiResult[Any]:
        return ApiResult(value, _warnings(response))


def _warnings(response: httpx.Response) -> tuple[NewspaperMessage, ...]:
    return messages_in_response(response).warnings


def _parse(model: type[M], response: httpx.Response) -> M:
    try:
        return model.model_validate(json_of(response, api=API))
    except (ValueError, ValidationError) as exc:
        raise UnexpectedResponse(f"{response.request.url.path}: not a {model.__name__}: {exc}") from exc


def _created(response: httpx.Response) -> ApiResult[int]:
    """A taken order or purchase: its id (``{id: n}`` in the spec, a bare integer for purchases), with the
    errors and warnings its answer carried."""
    remote_id = id_in_response(response)
    if remote_id is None:
        raise UnexpectedResponse(f"{response.request.url.path}: no id in the response")
    found = messages_in_response(response)
    return ApiResult(remote_id, found.warnings, found.errors)


def _plain_text(response: httpx.Response) -> str:
    try:
        body = json_of(response, api=API)
    except ValueError:
        return response.text
    return body if isinstance(body, str) else response.text


def _segment(value: str | int) -> str:
    return quote(str(value), safe="")


def _order_path(order_id: int | str, leaf: str) -> str:
    return f"{SUBMISSION}/orders/{_segment(order_id)}/{leaf}"


def _purchase_path(purchase_id: int | str, leaf: str) -> str:
    return f"{ADDRESS}/purchases/{_segment(purchase_id)}/{leaf}"
