"""Structure files of the newspaper sandbox (scope SENDINGS_NEWSPAPER_ADDRESS) and the notice e-mail.

``GET structurefiles/{fileCode}`` answers a JSON list of ``{fileName, mimeType, size, data}`` (base64 of a
zip holding a CSV); fileCode 1 is AZ/GZA, 2 is AZA/AZB, 9 both. The bytes depend only on
``config.structure_file_version``. ``POST structurefiles/email`` takes ``{"email": ...}`` or
``{"emailAddress": ...}`` and answers the plain-text confirmation ``E-mail address registered``.
"""

from __future__ import annotations

import base64
import io
import zipfile
from typing import Any

from email_validator import EmailNotValidError, validate_email
from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from sandbox.config import SandboxConfig
from sandbox.guesses import is_other
from sandbox.newspaper.messages import NewspaperRejection
from sandbox.state import SandboxState

PREFIX = "/logistics/newspaper/address/v1/structurefiles"
FILE_CODES: dict[int, tuple[str, ...]] = {1: ("AZ_GZA",), 2: ("AZA_AZB",), 9: ("AZ_GZA", "AZA_AZB")}
EMAIL_CONFIRMATION = "E-mail address registered"
_ROWS = (
    (6280, "Hochdorf", 101, 3),
    (6353, "Weggis", 102, 1),
    (8706, "Meilen", 201, 4),
    (2502, "Biel/Bienne", 301, 12),
)


def structure_file(kind: str, version: int) -> dict[str, Any]:
    """One structure file; its bytes are a pure function of ``kind`` and ``version``."""
    lines = ["zipCode;city;mailCarrierDistrict;route;fileType;version"]
    lines += [
        f"{zip_code};{city};{district};{route};{kind};{version}" for zip_code, city, district, route in _ROWS
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        # A fixed timestamp keeps the archive identical from one call to the next.
        entry = zipfile.ZipInfo(f"{kind}.csv", date_time=(2024, 1, 1, 0, 0, 0))
        archive.writestr(entry, ("\n".join(lines) + "\n").encode("utf-8"), compress_type=zipfile.ZIP_DEFLATED)
    content = buffer.getvalue()
    return {
        "fileName": f"{kind}_v{version}.zip",
        "mimeType": "application/zip",
        "size": len(content),
        "data": base64.b64encode(content).decode("ascii"),
    }


class NoticeRecipients:
    """E-mail addresses registered for structure-file notices."""

    def __init__(self, state: SandboxState) -> None:
        self._addresses = state.table("newspaper.notice_recipients")

    def add(self, address: str) -> None:
        # Registering an address again keeps its first place.
        self._addresses.put(address, address)

    def addresses(self) -> list[str]:
        """The registered addresses, in the order they first arrived."""
        return self._addresses.keys()


def _invalid(text: str) -> NewspaperRejection:
    return NewspaperRejection(400, [{"error": text, "resource": None}])


def create_router(config: SandboxConfig, recipients: NoticeRecipients) -> APIRouter:
    """GET structurefiles/{fileCode} and POST structurefiles/email."""
    router = APIRouter(prefix=PREFIX)

    @router.post("/email", response_class=PlainTextResponse)
    async def register_notice_email(request: Request) -> PlainTextResponse:
        try:
            raw = await request.json()
        except ValueError:
            raw = None
        # newspaper.structure-file-email-body, the other way: only emailAddress is the field.
        fields = ("emailAddress",) if is_other(request) else ("email", "emailAddress")
        address = (
            next((raw.get(field) for field in fields if raw.get(field)), None)
            if isinstance(raw, dict)
            else None
        )
        if not isinstance(address, str):
            raise _invalid(f"Invalid request: {' (or '.join(fields)}{')' * (len(fields) - 1)} is required")
        try:
            normalised = validate_email(address, check_deliverability=False).normalized
        except EmailNotValidError as exc:
            raise _invalid(f"Invalid request: email: {exc}") from None
        recipients.add(normalised)
        return PlainTextResponse(EMAIL_CONFIRMATION)

    @router.get("/{file_code}")
    def structure_files(file_code: int) -> list[dict[str, Any]]:
        kinds = FILE_CODES.get(file_code)
        if kinds is None:
            raise _invalid(f"Invalid request: fileCode must be 1, 2 or 9, not {file_code}")
        return [structure_file(kind, config.structure_file_version) for kind in kinds]

    return router
