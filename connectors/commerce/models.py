"""Pydantic models of the commerce API shapes (§2): the spec's field names as aliases, Pythonic attributes.

Every model keeps fields it does not know (``extra="allow"``; zips carry ``city39``, for example) and every
field a response may leave out is optional. Enums the spec leaves open are :class:`OpenEnum` strings, and
the values real responses use instead of the spec's names (``PICK_POST`` for a pickup point, ``MY_POST_24``
for a locker) are read as synonyms (:attr:`AddressType.canonical`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.alias_generators import to_camel

from connectors.models import OpenEnum
from connectors.userinfo import Userinfo as Userinfo
from connectors.userinfo import UserinfoAddress as UserinfoAddress


class CommerceModel(BaseModel):
    """Base of the commerce shapes: camelCase aliases, unknown fields kept, either name accepted."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True
    )

    def to_body(self) -> dict[str, Any]:
        """The JSON body the service expects: aliases, fields never set left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


# --- open enums


class AddressType(OpenEnum):
    MAIN = "MAIN"
    DOMICILE = "DOMICILE"
    POST_OFFICE = "POST_OFFICE"
    PICKUP_POINT = "PICKUP_POINT"
    LOCKER = "LOCKER"
    POSTBOX = "POSTBOX"

    @property
    def canonical(self) -> AddressType:
        """The spec's name of this type: real responses say ``PICK_POST`` and ``MY_POST_24``."""
        return AddressType(ADDRESS_TYPE_SYNONYMS.get(str(self), str(self)))


ADDRESS_TYPE_SYNONYMS: dict[str, str] = {"PICK_POST": "PICKUP_POINT", "MY_POST_24": "LOCKER"}


class Title(OpenEnum):
    MISTER = "MISTER"


class Quality(OpenEnum):
    CERTIFIED = "CERTIFIED"


class DeliveryQuality(OpenEnum):
    RELIABLE = "RELIABLE"


class DoorDelivery(OpenEnum):
    AVAILABLE = "AVAILABLE"


class Activity(OpenEnum):
    WORK = "WORK"
    NO_SERVICE = "NO_SERVICE"


class ZipType(OpenEnum):
    DOMICILE = "DOMICILE"
    POSTBOX = "POSTBOX"


class Gender(OpenEnum):
    MALE = "MALE"


class NotifyMode(OpenEnum):
    EMAIL = "EMAIL"


class Verification(OpenEnum):
    NONE = "NONE"


# --- value parsers

_COMPACT = re.compile(r"^(\d{8})T(\d{6})([+-]\d{4}|Z)?$")


def parse_expires(value: object) -> object:
    """Read the compact ISO 8601 form ``yyyymmddThhmmss+hhmm`` (§2.3); the extended form is accepted too."""
    if not isinstance(value, str):
        return value
    match = _COMPACT.match(value.strip())
    if match is None:
        return value  # the extended ISO form, or an error pydantic reports with the field's name
    date, time, offset = match.groups()
    if offset in (None, "Z"):
        offset = "+0000"
    return dt.datetime.strptime(f"{date}T{time}{offset}", "%Y%m%dT%H%M%S%z")


def format_expires(moment: dt.datetime) -> str:
    """``moment`` in the compact form the service uses."""
    return moment.strftime("%Y%m%dT%H%M%S%z")


CompactDateTime = Annotated[dt.datetime, BeforeValidator(parse_expires)]


# --- 2.1 address


class Addressee(CommerceModel):
    title: Title | None = None
    first_name: str | None = None
    last_name: str | None = None


class House(CommerceModel):
    street: str | None = None
    house_number: str | None = None
    house_key: str | None = None
    additional_address: str | None = None


class Zip(CommerceModel):
    zip: str | None = None
    city: str | None = None
    country_code: str | None = None


class GeographicLocation(CommerceModel):
    house: House | None = None
    zip: Zip | None = None


class LogisticLocation(CommerceModel):
    post_box_number: str | None = None
    house: House | None = None
    zip: Zip | None = None


class Address(CommerceModel):
    """A personal address of the user (§2.1); ``id`` is absent on the MAIN address."""

    id: str | None = None
    type: AddressType | None = None
    nickname: str | None = None
    addressee: Addressee | None = None
    geographic_location: GeographicLocation | None = None
    logistic_location: LogisticLocation | None = None


# --- 2.2 / 2.3 validation


class ValidationRequest(CommerceModel):
    """An address to validate (§2.2)."""

    addressee: Addressee = Field(default_factory=Addressee)
    geographic_location: GeographicLocation = Field(default_factory=GeographicLocation)
    logistic_location: LogisticLocation = Field(default_factory=LogisticLocation)
    full_validation: bool = True

    @classmethod
    def of(cls, fields: Mapping[str, str | None], *, full_validation: bool = True) -> ValidationRequest:
        """The request from its leaf fields, named as in the body (the columns of an input file:
        :data:`VALIDATION_FIELDS`); a field left out is empty.

        Raises:
            ValueError: a name that is no leaf field of the request.
        """
        if unknown := sorted(set(fields) - VALIDATION_FIELDS):
            raise ValueError(f"not a field of a validation request: {', '.join(unknown)}")
        get = fields.get
        return cls(
            addressee=Addressee(title=get("title"), first_name=get("firstName"), last_name=get("lastName")),
            geographic_location=GeographicLocation(
                house=House(
                    street=get("street"),
                    house_number=get("houseNumber"),
                    additional_address=get("additionalAddress"),
                ),
                zip=Zip(zip=get("zip"), city=get("city")),
            ),
            logistic_location=LogisticLocation(post_box_number=get("postBoxNumber") or ""),
            full_validation=full_validation,
        )


VALIDATION_FIELDS = frozenset(
    {
        "additionalAddress",
        "city",
        "firstName",
        "houseNumber",
        "lastName",
        "postBoxNumber",
        "street",
        "title",
        "zip",
    }
)
"""The leaf fields of a validation request (§2.2) by their names in the body."""


class ValidationResult(CommerceModel):
    """The service's verdict on an address (§2.3)."""

    quality: Quality | None = None
    expires: CompactDateTime | None = None
    address: Address | None = None


# --- 2.4 auto-completion


class ZipEntry(CommerceModel):
    """A zip and its city names (extra fields such as ``city39`` are kept)."""

    zip: str
    city18: str | None = None
    city27: str | None = None

    @property
    def city39(self) -> str | None:
        extra = self.model_extra or {}
        value = extra.get("city39")
        return value if isinstance(value, str) else None

    @property
    def city(self) -> str:
        """The longest city name the entry carries."""
        return self.city39 or self.city27 or self.city18 or ""


class ZipList(CommerceModel):
    zips: list[ZipEntry] = Field(default_factory=list)


class StreetList(CommerceModel):
    streets: list[str] = Field(default_factory=list)


class HouseList(CommerceModel):
    houses: list[str] = Field(default_factory=list)


# --- 2.5 / 2.6 deliverabilities


class DeliveryHouse(CommerceModel):
    street: str | None = None
    house_number: str | None = None


class DeliveryLocation(CommerceModel):
    house: DeliveryHouse = Field(default_factory=DeliveryHouse)
    zip: Zip = Field(default_factory=Zip)


class DeliveryAddress(CommerceModel):
    """The address of a delivery query (§4.2): ``{ geographicLocation { house, zip } }``."""

    geographic_location: DeliveryLocation = Field(default_factory=DeliveryLocation)

    @classmethod
    def of(
        cls, *, zip_code: str, city: str, street: str | None = None, house_number: str | None = None
    ) -> DeliveryAddress:
        return cls(
            geographic_location=DeliveryLocation(
                house=DeliveryHouse(street=street, house_number=house_number),
                zip=Zip(zip=zip_code, city=city),
            )
        )

    def query_params(self) -> list[tuple[str, str]]:
        """The dotted query parameters of GET deliverabilities/when (§4.2); empty parts are left out."""
        location = self.geographic_location
        pairs = (
            ("address.geographicLocation.zip.zip", location.zip.zip),
            ("address.geographicLocation.zip.city", location.zip.city),
            ("address.geographicLocation.house.street", location.house.street),
            ("address.geographicLocation.house.houseNumber", location.house.house_number),
        )
        return [(name, value) for name, value in pairs if value]


class Deliverability(CommerceModel):
    incoming_date: dt.date | None = None
    product_code: str


class DeliveryDay(CommerceModel):
    delivery_date: dt.date
    deliverabilities: list[Deliverability] = Field(default_factory=list)
    activity: Activity | None = None

    @property
    def deliverable(self) -> bool:
        return bool(self.deliverabilities)

    @property
    def product_codes(self) -> list[str]:
        return [item.product_code for item in self.deliverabilities]


class Deliverabilities(CommerceModel):
    """When an address can be delivered (§2.5)."""

    days: list[DeliveryDay] = Field(default_factory=list)
    quality: DeliveryQuality | None = None
    delivery_to_the_door: DoorDelivery | None = None


class CodeRef(CommerceModel):
    code: str


class ServiceRequirement(CommerceModel):
    code: str
    mandatory: bool = False


class LogisticProduct(CommerceModel):
    """How a product can be delivered (§2.6)."""

    product_code: str
    barcode: str | None = None
    delivery_instructions: list[CodeRef] = Field(default_factory=list)
    additional_services: list[ServiceRequirement] = Field(default_factory=list)


# --- 2.7 reference data


class LocalizedName(CommerceModel):
    de: str | None = None
    fr: str | None = None
    it: str | None = None
    en: str | None = None

    def best(self, language: str = "de") -> str:
        """The name in ``language``, else in the first language given."""
        for value in (getattr(self, language, None), self.de, self.fr, self.it, self.en):
            if value:
                return str(value)
        return ""


class AdditionalService(CommerceModel):
    code: str
    name: LocalizedName = Field(default_factory=LocalizedName)
    barcode: str | None = None


class DeliveryInstruction(CommerceModel):
    code: str
    barcode: str | None = None
    name: LocalizedName = Field(default_factory=LocalizedName)
    editable: bool | None = None
    place_holder_names: list[Any] = Field(default_factory=list)
    option_names: list[Any] = Field(default_factory=list)


class Holiday(CommerceModel):
    date: dt.date
    name: LocalizedName = Field(default_factory=LocalizedName)


# --- 2.8 same-day acceptance points


class SameDayRequest(CommerceModel):
    address: DeliveryAddress
    delivery_date: dt.date


class DropOffPoint(CommerceModel):
    technical_zip: str | None = None
    description: str | None = None
    street: str | None = None
    street_number: str | None = None
    zip: Zip | None = None


class DropOff(CommerceModel):
    drop_off_point: DropOffPoint | None = None
    last_drop_off_time: str | None = None


class SameDayProduct(CommerceModel):
    product_code: str
    drop_off_info: list[DropOff] = Field(default_factory=list)

    @property
    def product_codes(self) -> list[str]:
        """The codes of ``productCode``, which may hold several separated by commas."""
        return [code.strip() for code in self.product_code.split(",") if code.strip()]


class SameDayAcceptance(CommerceModel):
    quality: DeliveryQuality | None = None
    results: list[SameDayProduct] = Field(default_factory=list)


# --- 2.9 / 2.10 pickup


class UserDetails(CommerceModel):
    """Who the user is (§2.9). A registration needs the names (its reader checks them); a pickup-points
    query (§4.3, "shaped like the pickup user request") is sent with what the user gave, possibly nothing."""

    gender: Gender | None = None
    first_name: str | None = None
    last_name: str | None = None
    language: str | None = None


class PickupAddress(CommerceModel):
    house: DeliveryHouse = Field(default_factory=DeliveryHouse)
    zip: Zip = Field(default_factory=Zip)


class Notification(CommerceModel):
    notify_mode: NotifyMode | None = None
    email: str | None = None
    mobile_number: str | None = None


class PickupUserRequest(CommerceModel):
    """A pickup-service user to register (§2.9); ``verified`` is sent as null unless set."""

    user_details: UserDetails = Field(default_factory=UserDetails)
    address: PickupAddress
    notification: Notification = Field(default_factory=Notification)
    service: str = "PICKUP"
    verified: str | None = None

    def to_body(self) -> dict[str, Any]:
        body = super().to_body()
        body["verified"] = self.verified
        return body


class PickupUser(CommerceModel):
    id: str
    verified: Verification | None = None


class OpeningInterval(CommerceModel):
    from_: str = Field(alias="from")
    to: str


def _opening_day(value: object) -> object:
    # The spec gives a closed day as an empty array; a day object with no intervals means the same.
    if isinstance(value, list):
        return {"openingIntervals": value}
    return value


class OpeningDay(CommerceModel):
    opening_intervals: list[OpeningInterval] = Field(default_factory=list)

    @property
    def closed(self) -> bool:
        return not self.opening_intervals


class PlainAddress(CommerceModel):
    street: str | None = None
    zip: str | None = None
    city: str | None = None


class GeoPosition(CommerceModel):
    latitude: str | None = None
    longitude: str | None = None


class PickupPoint(CommerceModel):
    pp_number: str
    service: str | None = None
    name: str | None = None
    address: PlainAddress | None = None
    web_link: str | None = None
    hint: str | None = None
    delivery: PlainAddress | None = None
    geographic_position: GeoPosition | None = None
    calendar: dict[dt.date, Annotated[OpeningDay, BeforeValidator(_opening_day)]] = Field(
        default_factory=dict
    )


class PickupPoints(CommerceModel):
    points: list[PickupPoint] = Field(default_factory=list)
