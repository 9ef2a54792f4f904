"""The commerce API client: one async method per endpoint of §4, each with the OAuth scope of its operation.

Non-personal operations use client credentials (one token per scope, :mod:`connectors.commerce.tokens`,
shared through :class:`~connectors.oauth.ClientCredentials`); personal ones need a signed-in user's
:class:`~connectors.commerce.oidc.UserSession`. Every path is relative to the base URL and comes from
:class:`CommercePaths`, so a service that serves a sub-API elsewhere (pickup under ``/pickpost/v1``) is a
setting; the endpoints whose path or method the spec does not show have paths there too.

Reads retry transient failures. Validation and the POST form of the deliverability query only read, so they
are retried like GETs; pickup registration, address labels and return orders change something and are never
sent twice on their own. The one exception: a 401 or 403 (§7 lists 403 "not authorized" for every group)
refuses a request unprocessed, so the token is renewed and the request, POSTs included, sent once more; a
second refusal is :class:`~connectors.errors.AuthFailed` naming the scope asked for.

Every request names its endpoint group of §7 (:class:`~connectors.commerce.errors.EndpointGroup`), by which
its answer is read: whether a 400 certainly means "not processed", and whether a 404 or 405 says that a path
that is a setting is wrong (:class:`~connectors.commerce.errors.GuessedPathNotFound`, naming the setting).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar
from urllib.parse import quote

import httpx

from connectors.commerce.answers import LABEL_ACCEPT, M, ReceivedAnswer, json_object, parse, parse_list
from connectors.commerce.errors import (
    ADDRESS_LABELS,
    API,
    AUTOCOMPLETE,
    DELIVERY,
    ENDPOINT_EXTENSION,
    PERSONAL_ADDRESSES,
    PICKUP_POINTS,
    PICKUP_USERS,
    RETURN_ORDERS,
    SAME_DAY,
    VALIDATION,
    AddressNotFound,
    EndpointGroup,
    error_for_response,
)
from connectors.commerce.models import (
    AdditionalService,
    Address,
    Deliverabilities,
    DeliveryAddress,
    DeliveryInstruction,
    Holiday,
    HouseList,
    LogisticProduct,
    PickupPoints,
    PickupUser,
    PickupUserRequest,
    SameDayAcceptance,
    SameDayRequest,
    StreetList,
    ValidationRequest,
    ValidationResult,
    ZipEntry,
    ZipList,
)
from connectors.commerce.tokens import ScopedTokens
from connectors.errors import ApiError, MalformedResponse, NotFound
from connectors.http import ApiClient, ClientOptions, RequestTraits
from connectors.jsontext import json_of
from connectors.oauth import ClientCredentials, TokenSource
from connectors.paths import CommercePaths as CommercePaths  # re-exported
from connectors.paths import CommerceScopes as CommerceScopes  # re-exported
from core.swiss_time import swiss_today

DEFAULT_DAY_COUNT = 14


_IDEMPOTENT = RequestTraits(idempotent=True)
_TRANSFER = RequestTraits(transfer=True)


class CommerceClient(ApiClient):
    """Async client of the commerce API.

    Args:
        base_url: ``{base_url}``; every path of :class:`CommercePaths` is appended to it.
        credentials: the registered client (token endpoint ``{auth_url}/OAuth/token``) and its token cache
            (share one to share the cache).
        user: the signed-in user's token source, for the personal endpoints.
        scopes: the scope of each operation.
        paths: where the sub-APIs and the unshown endpoints are.
        today: today's date (the default first day of a deliverability query).
        options: how the service is reached (:class:`~connectors.http.ClientOptions`).
    """

    api_name: ClassVar[str] = API

    def __init__(
        self,
        base_url: str,
        *,
        credentials: ClientCredentials,
        user: TokenSource | None = None,
        scopes: CommerceScopes | None = None,
        paths: CommercePaths | None = None,
        today: Callable[[], dt.date] = swiss_today,
        options: ClientOptions | None = None,
    ) -> None:
        super().__init__(base_url, options=options)
        self.credentials = credentials
        self.scopes = scopes or CommerceScopes()
        self.paths = paths or CommercePaths()
        self._today = today
        self._tokens = ScopedTokens(credentials, user, self.scopes.personal)

    async def __aenter__(self) -> CommerceClient:
        return self

    def __repr__(self) -> str:
        return f"CommerceClient(base_url={self.base_url!r}, credentials={self.credentials!r})"

    def error_for_response(self, response: httpx.Response) -> ApiError:
        return error_for_response(response)

    # --- 4.1 personal addresses (user token) -----------------------------------------------------------

    async def addresses(self) -> list[Address]:
        """The signed-in user's addresses; none when the service answers 404 ("no result", §7)."""
        try:
            response = await self._get(
                PERSONAL_ADDRESSES, f"{self.paths.address}/users/current/addresses", self._tokens.user()
            )
        except NotFound:
            return []
        return parse_list(Address, response, "addresses")

    async def main_address(self) -> Address:
        """The signed-in user's MAIN address."""
        response = await self._get(
            PERSONAL_ADDRESSES, f"{self.paths.address}/users/current/addresses/main", self._tokens.user()
        )
        return parse(Address, response, "main address")

    async def address(self, address_id: str) -> Address:
        """One of the signed-in user's addresses.

        Raises:
            AddressNotFound: no such address, or it is not this user's.
            CommerceRejected: ``address_id`` is not a valid id (HTTP 400).
        """
        path = f"{self.paths.address}/users/current/addresses/{quote(address_id, safe='')}"
        try:
            response = await self._get(PERSONAL_ADDRESSES, path, self._tokens.user())
        except NotFound as error:
            raise AddressNotFound(
                f"{API}: address {address_id} does not exist or is not the signed-in user's",
                api=API,
                status_code=error.status_code,
            ) from None
        return parse(Address, response, "address")

    # --- 4.1 validation and auto-completion (client credentials) --------------------------------------

    async def validate_address(self, request: ValidationRequest) -> ValidationResult:
        """POST addresses/validation; a read, so transient failures are retried."""
        response = await self._call(
            VALIDATION,
            "POST",
            f"{self.paths.address}/addresses/validation",
            json=request.to_body(),
            traits=_IDEMPOTENT,
            auth=self._tokens.scoped(self.scopes.validation),
        )
        return parse(ValidationResult, response, "validation result")

    async def zips(self, zip_city: str, *, type_: str | None = None) -> list[ZipEntry]:
        """Zips and cities matching a partial zip or city; no match is an empty list (the service's 404)."""
        params = {"zipCity": zip_city} | ({"type": type_} if type_ else {})
        response = await self._lookup(f"{self.paths.address}/zips", params)
        return [] if response is None else parse(ZipList, response, "zips").zips

    async def streets(self, name: str, *, zip_code: str | None = None) -> list[str]:
        """Street names matching a partial name, optionally within a zip; no match is an empty list."""
        params = {"name": name} | ({"zip": zip_code} if zip_code else {})
        response = await self._lookup(f"{self.paths.address}/streets", params)
        return [] if response is None else parse(StreetList, response, "streets").streets

    async def houses(self, zip_code: str, street_name: str, number: str = "") -> list[str]:
        """House numbers of a street matching a partial number; no match is an empty list."""
        params = {"zip": zip_code, "streetname": street_name, "number": number}
        response = await self._lookup(f"{self.paths.address}/houses", params)
        return [] if response is None else parse(HouseList, response, "houses").houses

    # --- 4.2 delivery (client credentials) ------------------------------------------------------------

    async def deliverabilities(
        self,
        address: DeliveryAddress,
        *,
        start: dt.date | None = None,
        day_count: int = DEFAULT_DAY_COUNT,
        delivery_dates: Sequence[dt.date] = (),
    ) -> Deliverabilities:
        """GET deliverabilities/when: the days from ``start`` (default today) for ``day_count`` days, or
        the explicit ``delivery_dates`` (then ``start`` and ``day_count`` are not sent)."""
        params = address.query_params()
        if delivery_dates:
            params += [("deliveryDates", day.isoformat()) for day in delivery_dates]
        else:
            params += [("date", (start or self._today()).isoformat()), ("dayCount", str(day_count))]
        response = await self._call(
            DELIVERY,
            "GET",
            f"{self.paths.delivery}/deliverabilities/when",
            params=params,
            auth=self._tokens.scoped(self.scopes.delivery),
        )
        return parse(Deliverabilities, response, "deliverabilities")

    async def deliverabilities_on(
        self, address: DeliveryAddress, delivery_dates: Iterable[dt.date]
    ) -> Deliverabilities:
        """POST deliverabilities/when with the body of §4.2 (a read, retried like one)."""
        body = {
            "address": address.to_body(),
            "deliveryDates": [day.isoformat() for day in delivery_dates],
        }
        response = await self._call(
            DELIVERY,
            "POST",
            f"{self.paths.delivery}/deliverabilities/when",
            json=body,
            traits=_IDEMPOTENT,
            auth=self._tokens.scoped(self.scopes.delivery),
        )
        return parse(Deliverabilities, response, "deliverabilities")

    async def logistic_product(self, product_code: str) -> LogisticProduct:
        """GET deliverabilities/how/{productCode}."""
        code = quote(product_code, safe="")
        response = await self._get(
            DELIVERY,
            f"{self.paths.delivery}/deliverabilities/how/{code}",
            self._tokens.scoped(self.scopes.delivery),
        )
        return parse(LogisticProduct, response, "logistic product")

    async def additional_services(self) -> list[AdditionalService]:
        return await self._options("additionalservices", AdditionalService)

    async def delivery_instructions(self) -> list[DeliveryInstruction]:
        return await self._options("deliveryinstructions", DeliveryInstruction)

    async def holidays(self) -> list[Holiday]:
        return await self._options("holidays", Holiday)

    async def same_day_acceptance_points(self, request: SameDayRequest) -> SameDayAcceptance:
        """Same-day acceptance points: a GET carrying the JSON body of §2.8, at the configured path.

        Raises:
            NotFound: no results (§7 lists 404 for the group); a wrong path answers so too.
            GuessedPathNotFound: the service takes no GET at the path (405).
        """
        response = await self._call(
            SAME_DAY,
            "GET",
            self.paths.same_day,
            json=request.to_body(),
            auth=self._tokens.scoped(self.scopes.delivery),
        )
        return parse(SameDayAcceptance, response, "same-day acceptance points")

    # --- 4.3 pickup --------------------------------------------------------------------------------

    async def register_pickup_user(self, request: PickupUserRequest) -> PickupUser:
        """POST pickup/v1/users: the user's pickup id (a new one when the user is new). Never resent on
        its own after an answer was lost; a 400 leaves the outcome unknown (§7 lists none for the group).

        Raises:
            GuessedPathNotFound: nothing at the path (404, which §7 does not list; or 405): the pickup path
                setting is wrong.
        """
        response = await self._call(
            PICKUP_USERS,
            "POST",
            f"{self.paths.pickup}/users",
            json=request.to_body(),
            auth=self._tokens.scoped(self.scopes.pickup),
        )
        return parse(PickupUser, response, "pickup user")

    async def pickup_points(self, request: PickupUserRequest) -> PickupPoints:
        """Pickup points near the user of ``request`` (sent with verified null), at the configured method
        and path; a read."""
        return parse(PickupPoints, await self._pickup_points(request), "pickup points")

    async def pickup_points_as_received(self, request: PickupUserRequest) -> dict[str, Any]:
        """The pickup points answer (see :meth:`pickup_points`) as received, once it reads as §2.10.

        Raises:
            MalformedResponse: the answer is not a JSON object that reads as pickup points.
            GuessedPathNotFound: nothing at the path or for the method (404, 405): a setting is wrong.
        """
        response = await self._pickup_points(request)
        parse(PickupPoints, response, "pickup points")
        received = json_of(response, api=API)
        if not isinstance(received, dict):
            raise MalformedResponse(f"{API}: the pickup points are not a JSON object", api=API)
        return received

    async def _pickup_points(self, request: PickupUserRequest) -> httpx.Response:
        body = request.model_copy(update={"verified": None}).to_body()
        return await self._call(
            PICKUP_POINTS,
            self.paths.pickup_points_method,
            self.paths.pickup_points or f"{self.paths.pickup}/points",
            json=body,
            traits=_IDEMPOTENT,
            auth=self._tokens.scoped(self.scopes.pickup),
        )

    # --- 4.4 barcode and return order (shapes not shown: JSON in, JSON out; paths are settings: a 404 or
    # 405 is GuessedPathNotFound, a 400 leaves the outcome unknown) ---------------------------------------

    async def create_address_label(self, body: dict[str, Any]) -> dict[str, Any]:
        """An address label; the spec shows neither its fields nor its path (a setting)."""
        response = await self._address_label(body)
        return json_object(response, "address label")

    async def create_address_label_as_received(self, body: dict[str, Any]) -> ReceivedAnswer:
        """An address label, its answer as received: JSON (the label inside, base64) or the label itself
        (``application/pdf``); read whole, so no further than ``POSTFLOWS_RESPONSE_MAX_BYTES``: a longer
        answer is refused as unreadable, its label's outcome unknown. Never resent on its own after an answer
        was lost."""
        response = await self._address_label(body)
        return ReceivedAnswer(response.content, response.headers.get("content-type", ""))

    async def _address_label(self, body: dict[str, Any]) -> httpx.Response:
        return await self._call(
            ADDRESS_LABELS,
            "POST",
            self.paths.barcode,
            json=body,
            headers={"Accept": LABEL_ACCEPT},
            auth=self._tokens.scoped(self.scopes.barcode),
            traits=_TRANSFER,
        )

    async def create_return_order(self, body: dict[str, Any]) -> dict[str, Any]:
        """A return order; the spec shows neither its fields nor its path (a setting)."""
        return json_object(await self._return_order(body), "return order")

    async def create_return_order_as_received(self, body: dict[str, Any]) -> ReceivedAnswer:
        """A return order, its answer as received. Never resent on its own after an answer was lost."""
        response = await self._return_order(body)
        return ReceivedAnswer(response.content, response.headers.get("content-type", ""))

    async def _return_order(self, body: dict[str, Any]) -> httpx.Response:
        return await self._call(
            RETURN_ORDERS,
            "POST",
            self.paths.return_order,
            json=body,
            auth=self._tokens.scoped(self.scopes.return_order),
        )

    # --- plumbing -------------------------------------------------------------------------------------

    async def _options(self, name: str, model: type[M]) -> list[M]:
        response = await self._get(
            DELIVERY, f"{self.paths.delivery}/options/{name}", self._tokens.scoped(self.scopes.delivery)
        )
        return parse_list(model, response, name)

    async def _lookup(self, path: str, params: dict[str, str]) -> httpx.Response | None:
        """An auto-completion query; None when the service answers 404 (no results, §7)."""
        try:
            return await self._call(
                AUTOCOMPLETE, "GET", path, params=params, auth=self._tokens.scoped(self.scopes.autocomplete)
            )
        except NotFound:
            return None

    async def _get(self, group: EndpointGroup, path: str, auth: httpx.Auth) -> httpx.Response:
        return await self._call(group, "GET", path, auth=auth)

    async def _call(self, group: EndpointGroup, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A request of the endpoint group ``group``, which reads its answer (see the module docstring)."""
        return await self.request(method, path, extensions={ENDPOINT_EXTENSION: group}, **kwargs)
