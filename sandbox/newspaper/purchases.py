"""Address validation and sorting purchases of the newspaper sandbox (scope SENDINGS_NEWSPAPER_ADDRESS).

A purchase's job validates during its first half (``validationStatus`` IN_PROGRESS → READY, percent 0 →
100) and sorts during the second (``sortingStatus`` WAITING → IN_PROGRESS → READY, or the status a
``job_outcome`` fault names). Output addresses and the sorting documents are served once sorting is
READY; before that they answer ``0000`` on HTTP 200. The output-address list is served under one path
spelling only, ``config.purchase_output_path_spelling``; the other one is a 404.

Address clean-up, the option the non-reusable-addresses document depends on, is the request flag
``addressCleanUp: true`` (its name is not in the spec).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from sandbox.config import SandboxConfig
from sandbox.guesses import is_other, play
from sandbox.newspaper.jobs import Job, start_job
from sandbox.newspaper.messages import NewspaperRejection, not_available, not_found, parse_body
from sandbox.newspaper.pdf import PDF_MIME_TYPES, document_body, render_pdf
from sandbox.state import SandboxState

PREFIX = "/logistics/newspaper/address/v1/purchases"
FIRST_PURCHASE_ID = 880_001

# Served document names in the order their mimeType alternates between "application/pdf" and "PDF".
DOCUMENTS = (
    "original-addresse",
    "output-addresses",
    "non-reusable-addresses",
    "bundle-labels",
    "container-labels",
    "sort-protocol",
    "order-confirmation",
)
_ALWAYS_AVAILABLE = {"original-addresse", "order-confirmation"}


class _Body(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", coerce_numbers_to_str=True
    )


class PurchaseAddress(_Body):
    id: str
    first_name: str = ""
    last_name: str = ""
    street: str = ""
    house_number: str = ""
    zip_code: int
    city: str = ""
    iso_code: str = "CH"


class PurchaseOrder(_Body):
    title: str
    deposit_date: date
    language: str = "DE"
    franking_licence: str = ""
    offer_option: str = "NO_PRICE"
    offer_email: str | None = None
    addresses: list[PurchaseAddress] = Field(min_length=1)
    level_validation: str = "COMPLETE"
    sorting_module: dict[str, Any] | None = None
    address_clean_up: bool = False


@dataclass
class PurchaseRecord:
    purchase_id: int
    order: PurchaseOrder
    job: Job

    @property
    def sorted(self) -> bool:
        """Whether sorting was ordered (a purchase without a sorting module is validated only)."""
        return self.order.sorting_module is not None

    def progress(self, now: float) -> dict[str, Any]:
        """The progress resource at ``now``. A validation-only purchase validates for the whole job and its
        sorting status stays WAITING: nothing will ever sort it."""
        progress = self.job.fraction(now)
        if not self.sorted:
            return {
                "validationStatus": (self.job.forced_outcome or "READY")
                if progress >= 1.0
                else "IN_PROGRESS",
                "validationProgressPercent": min(100, int(progress * 100)),
                "sortingStatus": "WAITING",
            }
        if progress >= 1.0:
            sorting = self.job.forced_outcome or "READY"
        elif progress >= 0.5:
            sorting = "IN_PROGRESS"
        else:
            sorting = "WAITING"
        return {
            "validationStatus": "READY" if progress >= 0.5 else "IN_PROGRESS",
            "validationProgressPercent": min(100, int(progress * 200)),
            "sortingStatus": sorting,
        }


def _normalised_street(street: str) -> str:
    text = street.strip()
    if text.lower().endswith("str."):
        text = text[:-4] + "strasse"
    return text[:1].upper() + text[1:]


def output_addresses(order: PurchaseOrder) -> list[dict[str, Any]]:
    """Validated and sorted addresses: statusCode ``OK``, ``CORRECTED`` (street spelling normalised) or
    ``UNKNOWN`` (not deliverable: no street or no Swiss postcode); Swiss ones bundled per postcode,
    foreign and unknown ones marked for manual bundling."""
    rows = []
    for address in order.addresses:
        swiss = address.iso_code.upper() == "CH"
        deliverable = bool(address.street.strip()) and (not swiss or 1000 <= address.zip_code <= 9699)
        street = _normalised_street(address.street) if deliverable else address.street
        if not deliverable:
            status, bundle, info = "UNKNOWN", "", "MANUALLY"
        else:
            status = "OK" if street == address.street else "CORRECTED"
            bundle = f"B{address.zip_code:04d}" if swiss else f"INT-{address.iso_code.upper()}"
            info = "AUTOMATIC" if swiss else "MANUALLY"
        rows.append(
            {
                "statusCode": status,
                "bundleId": bundle,
                "bundleInfo": info,
                "id": address.id,
                "firstName": address.first_name,
                "lastName": address.last_name,
                "street": street,
                "houseNumber": address.house_number,
                "zipCode": address.zip_code,
                "city": address.city,
                "isoCode": address.iso_code.upper(),
                "quantity": 1,
            }
        )
    rows.sort(key=lambda row: (row["bundleId"] == "", row["bundleId"], row["street"], row["houseNumber"]))
    return rows


def _document_lines(name: str, record: PurchaseRecord) -> list[str]:
    title = name.replace("-", " ").capitalize()
    lines = [title, f"Purchase {record.purchase_id}: {record.order.title}"]
    rows = output_addresses(record.order)
    if name == "non-reusable-addresses":
        rows = [row for row in rows if row["statusCode"] == "UNKNOWN"]
    if name in {"original-addresse", "output-addresses", "non-reusable-addresses"}:
        lines += [
            f"{row['id']} {row['lastName']}, {row['street']} {row['houseNumber']}, {row['zipCode']}"
            for row in rows
        ]
    else:
        bundles = sorted({row["bundleId"] for row in rows if row["bundleId"]})
        lines += [f"Bundles: {len(bundles)}", f"Addresses: {len(rows)}"]
    return lines


class PurchaseBook:
    """Purchases received by one sandbox app, kept in its state."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._purchases = state.table("newspaper.purchases")

    def add(self, order: PurchaseOrder, job: Job) -> PurchaseRecord:
        with self._state.atomic():
            record = PurchaseRecord(self._state.next_id("newspaper.purchase", FIRST_PURCHASE_ID), order, job)
            self._purchases.put(record.purchase_id, record)
            return record

    def get(self, purchase_id: int) -> PurchaseRecord:
        record: PurchaseRecord | None = self._purchases.get(purchase_id)
        if record is None:
            raise not_found(f"Purchase {purchase_id} not found")
        return record


SORTING_DOCUMENTS = frozenset({"bundle-labels", "container-labels", "sort-protocol"})


def create_router(config: SandboxConfig, state: SandboxState) -> APIRouter:
    """The purchase endpoints, keeping purchases in ``state``; the caller adds the scope check."""
    router = APIRouter(prefix=PREFIX)
    book = PurchaseBook(state)

    def finished_purchase(purchase_id: int) -> PurchaseRecord:
        """The purchase once its last ordered phase (sorting, or validation alone) is READY."""
        record = book.get(purchase_id)
        phase = "sortingStatus" if record.sorted else "validationStatus"
        status = record.progress(config.clock())[phase]
        if status != "READY":
            raise not_available(f"{phase} of purchase {purchase_id} is {status}")
        return record

    @router.post("")
    async def submit_purchase(request: Request) -> int:
        order, _ = await parse_body(request, PurchaseOrder)
        return book.add(order, start_job(request, config)).purchase_id

    @router.get("/{purchase_id}/progress")
    def purchase_progress(purchase_id: int) -> dict[str, Any]:
        return book.get(purchase_id).progress(config.clock())

    @router.get(f"/{{purchase_id}}/{config.purchase_output_path_spelling}")
    def purchase_output_addresses(purchase_id: int) -> dict[str, Any]:
        return {"outputAddresses": output_addresses(finished_purchase(purchase_id).order)}

    @router.get("/{purchase_id}/document/{name}")
    def purchase_document(purchase_id: int, name: str, request: Request) -> dict[str, Any]:
        if name not in DOCUMENTS:
            raise not_found(f"Unknown document {name}")
        record = book.get(purchase_id)
        # newspaper.clean-up-option, the other way: the option's field is another, ours is ignored.
        ignored = is_other(request)
        if ignored:
            play(request, "newspaper.clean-up-option")
        if name == "non-reusable-addresses" and (ignored or not record.order.address_clean_up):
            raise NewspaperRejection(
                404,
                [{"error": f"Purchase {purchase_id} was ordered without address clean-up", "resource": None}],
            )
        if name in SORTING_DOCUMENTS and not record.sorted:
            raise NewspaperRejection(
                404, [{"error": f"Purchase {purchase_id} was ordered without sorting", "resource": None}]
            )
        if name not in _ALWAYS_AVAILABLE:
            record = finished_purchase(purchase_id)
        mime_type = PDF_MIME_TYPES[DOCUMENTS.index(name) % 2]
        return document_body(render_pdf(_document_lines(name, record)), mime_type)

    return router
