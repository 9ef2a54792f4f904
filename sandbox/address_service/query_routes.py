"""Individual query (§4.2) and address assistant (§4.3, §4.4) endpoints.

``/runquery2`` answers ``Result.Data`` with every §2.3 output field except the two duplicate fields, in
table order and spelled as the spec table spells them (QSTAT, ShortReport, CorrectionType, TotalScore,
ValidFrom, ValidTo, Birthdate, Housekey, Company, Prename, Prename2, Name, MaidenName, AddressAddition,
CoAddress, Streetname, HouseNo, HouseNoAddition, Floor, ZIPcode, ZIPAddition, TownName, Canton,
CountryCode, PoBoxTerm, PoBoxNo, PoBoxZIP, PoBoxZIPAddition, PoBoxTownName); every value is a string.
All of these count towards ``max_queries_per_minute``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from sandbox.address_service.assistant import (
    AutoCompleteHit,
    AutoCompleteQuery,
    BuildingVerification,
    autocomplete,
    verify_building,
)
from sandbox.address_service.fields import QUERY_OUTPUT_NAMES, input_field
from sandbox.address_service.matching import keep_standardized_as_given
from sandbox.address_service.postcodes import load_postcode_directory
from sandbox.address_service.reference_seed import load_reference
from sandbox.address_service.service import AddressService, Status, answer
from sandbox.guesses import assistant_at_batch_address, is_other, play

_QUERY_RESULT_FIELDS = tuple(name for name in QUERY_OUTPUT_NAMES if not name.startswith("Double_"))
# Request field names of each auto-complete version: (ONRP, ZipCode, STRID, StreetName, HouseNo, addition).
_REQUEST_NAMES = {
    4: ("ONRP", "ZipCode", "STRID", "StreetName", "HouseNo", "HouseNoAddition"),
    3: ("ONRP", "ZipCode", "STRID", "StreetName", "HouseNo", "HouseNoAddition"),
    2: ("Onrp", "Zipcode", "StrId", "Streetname", "HouseNumber", "HouseNumberAddition"),
}
_WRAPPERS = {4: "QueryAutoComplete4Result", 3: "QueryAutoComplete3Result", 2: "QueryAutoCompleteResult"}


class _BadRequest(ValueError):
    """A request parameter has the wrong format (Status 801)."""


def query_router(service: AddressService) -> APIRouter:
    """The §4.2-§4.4 routes bound to ``service``."""
    router = APIRouter()

    @router.post("/runquery2")
    async def run_query2(request: Request) -> Response:
        return await _run_query(service, request, with_client=False)

    @router.post("/runquery2withclient")
    async def run_query2_with_client(request: Request) -> Response:
        return await _run_query(service, request, with_client=True)

    for version in (4, 3, 2):
        path = f"/autocomplete{version}"
        router.add_api_route(path, _autocomplete_endpoint(service, version), methods=["POST"])

    @router.get("/buildingverification2")
    def building_verification2(
        request: Request,
        streetname: str = "",
        houseno: str = "",
        housenoaddition: str = "",
        zipcode: str = "",
        townName: str = "",  # noqa: N803 - the spec's query parameter name
    ) -> Response:
        if assistant_at_batch_address(request):
            return Response(status_code=404)
        other = is_other(request)
        wrapper = "QueryBuildingVerificationResult" if other else "QueryBuildingVerification2Result"
        if refusal := service.refuse(request, wrapper, limit="query"):
            return refusal
        found = verify_building(
            load_reference(),
            streetname,
            houseno,
            housenoaddition,
            zipcode,
            townName,
            load_postcode_directory(),
        )
        data = _building_data(found, other=other)
        if other:
            play(request, "address-service.pstat-values")
        return answer(wrapper, BuildingVerificationData=data)

    return router


def _building_data(found: BuildingVerification, *, other: bool) -> dict[str, Any]:
    """The BuildingVerificationData of ``found`` (empty fields where nothing was found)."""
    town, street, building = found.town, found.street, found.building
    return {
        "Canton": town.canton if town else "",
        "CountryCode": town.country_code if town else "",
        "HouseKey": building.house_key if building else 0,
        "HouseNo": building.house_no if building else "",
        "HouseNoAddition": building.house_no_addition if building else "",
        "ONRP": town.onrp if town else 0,
        # address-service.pstat-values, the other way: values counted from 2.
        "PSTAT": found.pstat + 1 if other else found.pstat,
        "STRID": street.strid if street else 0,
        "StreetName": street.street_name if street else "",
        "TownName": town.town_name if town else "",
        "ZipAddition": town.zip_addition if town else "",
        "ZipCode": town.zip_code if town else "",
    }


async def _json_object(request: Request) -> dict[str, Any] | None:
    try:
        body = await request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _query_values(address: Any) -> tuple[Any, dict[str, str]]:
    if not isinstance(address, dict) or not isinstance(address.get("Data"), list):
        raise _BadRequest("address.Data missing")
    values: dict[str, str] = {}
    for item in address["Data"]:
        if not isinstance(item, dict) or not isinstance(item.get("FieldName"), str):
            raise _BadRequest("Data entries need a FieldName")
        name = input_field(item["FieldName"])
        if name is not None and item.get("Value") is not None:
            values[name] = str(item["Value"])
    return address.get("Id", 0), values


async def _run_query(service: AddressService, request: Request, *, with_client: bool) -> JSONResponse:
    other = is_other(request)
    wrapper = "RunQuery2WithClientResult" if other and with_client else "RunQuery2Result"
    if refusal := service.refuse(request, wrapper, limit="query"):
        return refusal
    body = await _json_object(request)
    try:
        if body is None or not isinstance(body.get("key"), str):
            raise _BadRequest("key missing")
        record_id, values = _query_values(body.get("address"))
    except _BadRequest:
        return answer(wrapper, Status.INVALID_PARAMETER)
    matcher = service.matcher_for(body["key"])
    if matcher is None:
        return answer(wrapper, Status.KEY_UNKNOWN)
    if with_client and (billing := service.billing_status(body.get("billingReferenceNumber"))):
        return answer(wrapper, billing)
    matched = matcher.match(values)
    output = (keep_standardized_as_given(matched) if other else matched).output
    data = [{"FieldName": name, "Value": output.get(name, "")} for name in _QUERY_RESULT_FIELDS]
    settlement = service.store.next_settlement()
    if other:  # address-service.query-billed, the other way: an answer that names no settlement
        return answer(wrapper, Result={"Data": data, "Id": record_id}, SettlementId=None)
    return answer(wrapper, Result={"Data": data, "Id": record_id}, SettlementId=settlement)


def _text(source: dict[str, Any], name: str) -> str:
    value = source.get(name)
    if value is None:
        return ""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value)
    raise _BadRequest(f"{name} must be a string")


def _number(source: dict[str, Any], name: str) -> int:
    value = source.get(name)
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise _BadRequest(f"{name} must be a number")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise _BadRequest(f"{name} must be a number") from None


def _autocomplete_query(body: dict[str, Any] | None, version: int) -> AutoCompleteQuery:
    if body is None or not isinstance(body.get("request"), dict):
        raise _BadRequest("request missing")
    fields = body["request"]
    onrp, zip_code, strid, street, house_no, addition = _REQUEST_NAMES[version]
    return AutoCompleteQuery(
        onrp=_number(fields, onrp),
        zip_code=_text(fields, zip_code),
        zip_addition=_text(fields, "ZipAddition"),
        town_name=_text(fields, "TownName"),
        strid=_number(fields, strid),
        street_name=_text(fields, street),
        house_no=_text(fields, house_no),
        house_no_addition=_text(fields, addition),
        zip_order_mode=_number(body, "zipOrderMode"),
    )


def _entry(hit: AutoCompleteHit, version: int) -> dict[str, Any]:
    town, street, building = hit.town, hit.street, hit.building
    house_key = building.house_key if building else 0
    strid = street.strid if street else 0
    street_name = street.street_name if street else ""
    house_no = building.house_no if building else ""
    addition = building.house_no_addition if building else ""
    if version == 2:
        return {
            "HouseKey": house_key,
            "HouseNumber": house_no,
            "HouseNumberAddition": addition,
            "Onrp": town.onrp,
            "StrId": strid,
            "Streetname": street_name,
            "TownName": town.town_name,
            "ZipAddition": town.zip_addition,
            "Zipcode": town.zip_code,
        }
    as_number = version == 3
    return {
        "Canton": town.canton,
        "CountryCode": town.country_code,
        "HouseKey": house_key if as_number else str(house_key),
        "HouseNo": house_no,
        "HouseNoAddition": addition,
        "ONRP": town.onrp if as_number else str(town.onrp),
        "STRID": strid if as_number else str(strid),
        "StreetName": street_name,
        "TownName": town.town_name,
        "ZipAddition": town.zip_addition,
        "ZipCode": town.zip_code,
    }


def _autocomplete_endpoint(service: AddressService, version: int) -> Any:
    wrapper = _WRAPPERS[version]

    async def endpoint(request: Request) -> Response:
        if assistant_at_batch_address(request):
            return Response(status_code=404)
        if refusal := service.refuse(request, wrapper, limit="query"):
            return refusal
        try:
            query = _autocomplete_query(await _json_object(request), version)
        except _BadRequest:
            return answer(wrapper, Status.INVALID_PARAMETER)
        hits = autocomplete(load_reference(), query, load_postcode_directory())
        return answer(wrapper, AutoCompleteResult=[_entry(hit, version) for hit in hits])

    endpoint.__name__ = f"autocomplete{version}"
    return endpoint
