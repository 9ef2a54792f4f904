"""Pydantic models of the address web service's requests and responses (spec §2, §4).

Attribute names are Pythonic; the spec's field names are the aliases. ``/Date(<ms><+hhmm>)/`` values become
timezone-aware datetimes.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from enum import IntEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

_DATE_PATTERN = re.compile(r"^/Date\((?P<ms>-?\d+)(?P<offset>[+-]\d{4})?\)/$")


def parse_ms_date(value: Any) -> datetime | None:
    """Parse the service's ``/Date(<milliseconds since epoch><+hhmm>)/`` format to an aware datetime.

    The instant is the milliseconds value (UTC); the offset only chooses the time zone it is shown in.
    ISO 8601 strings and datetimes pass through; empty values become None.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = str(value).strip()
    match = _DATE_PATTERN.match(text)
    if match is None:
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError(f"not a /Date(ms+hhmm)/ value: {text!r}") from exc
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    tz = UTC
    if offset := match.group("offset"):
        sign = -1 if offset[0] == "-" else 1
        tz = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
    return datetime.fromtimestamp(int(match.group("ms")) / 1000, tz=tz)


MsDate = Annotated[datetime | None, BeforeValidator(parse_ms_date)]


class TokenStatus(IntEnum):
    """Batch token status (spec §2.6); a value outside the table reads as UNKNOWN."""

    NEW = 0
    ERROR = 1
    WAITING = 2
    RUNNING = 3
    FINISHED = 4
    FAILED = 5
    CANCELED = 6
    UNKNOWN = 7

    @classmethod
    def _missing_(cls, value: object) -> TokenStatus:
        return cls.UNKNOWN

    @property
    def is_pending(self) -> bool:
        """Not ended: New, Waiting, Running, and Unknown (7, or a number §2.6 does not list): §3 shows no
        transitions, so an unknown state may still end in a result (the guess
        ``address-service.token-status-transitions``); it is waited out, never taken for a failure."""
        return self in (TokenStatus.NEW, TokenStatus.WAITING, TokenStatus.RUNNING, TokenStatus.UNKNOWN)

    @property
    def is_failure(self) -> bool:
        return self in (TokenStatus.ERROR, TokenStatus.FAILED, TokenStatus.CANCELED)


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow", frozen=True, defer_build=True)


class ReplaceItem(_Model):
    search: str = Field(alias="Search")
    replacement: str = Field(alias="Replacement")


INPUT_FILE_PLACEHOLDER = "{###INPUTFILE###}"
OUTPUT_FILE_PLACEHOLDER = "{###OUTPUTFILE###}"


class BatchJob(_Model):
    """What /runbatch returns."""

    batch_token: str = Field(alias="BatchToken")
    settlement_id: int | None = Field(default=None, alias="SettlementId")


class BatchStatus(_Model):
    """The ``BatchStatus`` of /checkbatchstatus. ``reported_token_status`` keeps the number the service sent,
    which differs from ``token_status`` when it is not in the §2.6 table (read as UNKNOWN)."""

    token_status: TokenStatus = Field(alias="TokenStatus")
    reported_token_status: int | None = None
    progress: float | None = Field(default=None, alias="Progress")
    remaining_time_seconds: int | None = Field(default=None, alias="RemainingTimeSeconds")
    message: str | None = Field(default=None, alias="Message")
    start_date_time: MsDate = Field(default=None, alias="StartDateTime")
    last_update_date_time: MsDate = Field(default=None, alias="LastUpdateDateTime")

    @model_validator(mode="before")
    @classmethod
    def _keep_reported_status(cls, data: Any) -> Any:
        if isinstance(data, dict) and "reported_token_status" not in data:
            reported = data.get("TokenStatus", data.get("token_status"))
            if isinstance(reported, int) or (isinstance(reported, str) and reported.isdigit()):
                return {**data, "reported_token_status": int(reported)}
        return data


class QueryResult(_Model):
    """The ``Result`` of /runquery2: the field list depends on the query key."""

    id: int | None = Field(default=None, alias="Id")
    fields: dict[str, str | None] = Field(default_factory=dict)
    settlement_id: int | None = None


def _optional_int(value: Any) -> int | None:
    """A number the service sends as a number or as text; empty is None. Anything else (an object, an
    infinite number) is a ``ValueError``, which pydantic reports with the field's name."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, OverflowError) as exc:
        raise ValueError(f"not a whole number: {str(value)[:40]!r}") from exc


def _stringify(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)


OptionalText = Annotated[str | None, BeforeValidator(_stringify)]


class _BuildingAddress(_Model):
    """The address fields shared by auto-complete hits (§2.7) and building verification (§4.4)."""

    canton: OptionalText = Field(default=None, alias="Canton")
    country_code: OptionalText = Field(default=None, alias="CountryCode")
    house_key: int | None = Field(default=None, alias="HouseKey")
    house_no: OptionalText = Field(default=None, alias="HouseNo")
    house_no_addition: OptionalText = Field(default=None, alias="HouseNoAddition")
    onrp: int | None = Field(default=None, alias="ONRP")
    strid: int | None = Field(default=None, alias="STRID")
    street_name: OptionalText = Field(default=None, alias="StreetName")
    town_name: OptionalText = Field(default=None, alias="TownName")
    zip_addition: OptionalText = Field(default=None, alias="ZipAddition")
    zip_code: OptionalText = Field(default=None, alias="ZipCode")

    @field_validator("house_key", "onrp", "strid", mode="before")
    @classmethod
    def _number(cls, value: Any) -> int | None:
        return _optional_int(value)


class AutocompleteEntry(_BuildingAddress):
    """One auto-complete hit (§2.7), normalised across autocomplete2/3/4.

    ``house_key``, ``onrp`` and ``strid`` are numbers in every version here (strings in autocomplete4's wire
    format); ``zip_addition`` keeps its two digits.
    """


# autocomplete2 spells these fields the obsolete way.
AUTOCOMPLETE2_FIELD_NAMES = {
    "Onrp": "ONRP",
    "Zipcode": "ZipCode",
    "StrId": "STRID",
    "Streetname": "StreetName",
    "HouseNumber": "HouseNo",
    "HouseNumberAddition": "HouseNoAddition",
}


class BuildingVerification(_BuildingAddress):
    """``BuildingVerificationData`` of /buildingverification2; PSTAT is the postal validation status."""

    pstat: int | None = Field(default=None, alias="PSTAT")

    @field_validator("pstat", mode="before")
    @classmethod
    def _pstat(cls, value: Any) -> int | None:
        return _optional_int(value)
