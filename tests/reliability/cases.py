"""The flows of the fault matrix: each with a small input that exercises every remote step it has, and what
has to exist on the service before it runs (an order to report on, files left behind for the clean-up).

A case never names its remote steps: the matrix learns them from a clean run (see
:mod:`tests.reliability.matrix`), so a step a flow gains is in the matrix without a change here. A case calls
its flow's function (``.fn``): the matrix runs it inside a Prefect flow run, where its tasks are task runs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

import history
from flows.results import RunResult
from history.models import JobState
from runtime.settings import get_settings
from sandbox.inprocess import SandboxTransport, address_service_url, newspaper_url, token_url
from tests.flows.calls import call

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Every poll of the matrix is quick, and a job that never ends is given up on soon.
QUICK_POLL = {"min_poll_interval_s": 0.01, "max_poll_interval_s": 0.05, "max_wait_s": 2.0}
JOB_SECONDS = 0.05
# Orders go LOADED → CONTROL → DONE and the order runs wait in LOADED too, so a run meets every status check
# and report of an order's life (by default the sandbox keeps an order LOADED and a run ends at once).
ORDER_STATUSES = ("LOADED", "CONTROL", "DONE")
WAIT_IN_LOADED = ["LOADED"]
BILLING_REFERENCE = "RRN-0001"
ORDERS = "logistics/newspaper/submission/v1/orders"

# A person at the address and one who moved: the service answers with a ZIP (results and moves).
ADDRESSES = """KundenNr;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort
1001;Hans;Muster;Lindenstrasse;12;6010;Kriens
1008;Peter;Meier;Bahnhofstrasse;8;5070;Frick
"""
COMMERCE_ADDRESSES = """KundenNr;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort
2001;Hans;Muster;Lindenstrasse;12;6010;Kriens
2002;Beat;Muster;Hauptstrasse;3;5070;Frick
"""
PICKUP_USERS = """gender,firstName,lastName,language,street,houseNumber,zip,city,countryCode,notifyMode,email
MALE,Hans,Muster,DE,Bahnhofstrasse,1,8001,Zürich,CH,EMAIL,hans.muster@example.ch
FEMALE,Anna,Beispiel,FR,Rue du Marché,12,1204,Genève,CH,EMAIL,anna.beispiel@example.ch
"""

PICKUP_LOCATIONS = """customerNo,street,houseNumber,zip,city
L-1,Bahnhofstrasse,1,8001,Zürich
L-2,Rue du Marché,12,1204,Genève
"""
LABEL_REQUESTS = """{"item": {"itemID": "ORDER-1", "recipient": {"name1": "Hans Muster", "zip": "8001"}}}
{"item": {"itemID": "ORDER-2", "recipient": {"name1": "Anna Beispiel", "zip": "1204"}}}
"""
RETURN_ORDER = """{"customerReference": "R-1", "pickupAddress": {"zip": "8001", "city": "Zürich"}}
"""


@dataclass
class CellSite:
    """Where one cell runs: its folder (input, output, data dir) and the sandbox it talks to."""

    folder: Path
    sandbox: SandboxTransport

    @property
    def out(self) -> Path:
        return self.folder / "out"

    def write(self, name: str, text: str) -> Path:
        path = self.folder / name
        path.write_text(text, encoding="utf-8")
        return path


Run = Callable[[CellSite], Awaitable[RunResult | dict[str, Any]]]
Prepare = Callable[[CellSite], Awaitable[None]]


async def _nothing(site: CellSite) -> None:
    return None


@dataclass(frozen=True)
class FlowCase:
    """One row group of the matrix: a flow (and variant) with its input.

    Attributes:
        label: how the table names it.
        flow: the flow's name in the run history.
        run: runs the flow for a cell, returning its summary (or raising what it raised).
        prepare: what the service and the history must hold before the flow runs; its requests are not
            counted.
        new_steps_only: a variant of a case before it: cells only for the steps no earlier case of the same
            flow took (the billed variant's runbatchwithclient, say).
    """

    label: str
    flow: str
    run: Run
    prepare: Prepare = _nothing
    new_steps_only: bool = False


def order_body(*, newspaper: str, gratis: bool) -> dict[str, Any]:
    """An order the sandbox accepts as it is: standard for 4711, gratis (two location categories) for 5120."""
    body: dict[str, Any] = {
        "language": "DE",
        "basisInformation": {
            "newspaperNumber": newspaper,
            "issueNumber": {"from": 101},
            "lateDelivery": False,
            "deliveryDate": (dt.date.today() + dt.timedelta(days=7)).isoformat(),
            "differenceEmails": ["vertrieb@seetaler-bote.ch"],
            "confirmationEmails": ["druck@seetaler-bote.ch"],
        },
        "sender": {
            "companyName1": "Seetal Medien AG",
            "address1": "Hauptstrasse 1",
            "zipCode": 6280,
            "city": "Hochdorf",
        },
    }
    if gratis:
        body["gratisDelivery"] = {
            "gratisShipments": [
                {"locationCategory": "A", "weight": 90},
                {"locationCategory": "B", "weight": 90},
            ]
        }
    else:
        shipment = {
            "weight": 180,
            "countMailMan": 120,
            "countCity": 40,
            "countRest": 5,
            "shipmentRemark": "Stapel",
        }
        body["nationalDelivery"] = {"sortedDelivery": {"sortedShipments": [shipment]}}
    return body


async def _order_on_the_service(site: CellSite) -> None:
    """A standard order the service has finished, for the reports flow to read."""
    async with httpx.AsyncClient(transport=site.sandbox) as http:
        token = await http.post(
            token_url(),
            data={
                "client_id": "sandbox-client",
                "client_secret": "sandbox-secret",
                "scope": "SENDINGS_NEWSPAPER_SUBMISSION_ORDERS",
                "grant_type": "client_credentials",
            },
        )
        http.headers["Authorization"] = f"Bearer {token.json()['access_token']}"
        answer = await http.post(
            f"{newspaper_url()}/{ORDERS}/standard", json=order_body(newspaper="4711", gratis=False)
        )
    (site.folder / "order-id").write_text(str(answer.json()["id"]))
    await asyncio.sleep(JOB_SECONDS * 2)


async def _files_left_behind(site: CellSite) -> None:
    """An uploaded and a created file on the service, recorded by a run that never deleted them."""
    async with httpx.AsyncClient(
        transport=site.sandbox, base_url=address_service_url(), auth=("sandbox-user", "sandbox-password")
    ) as http:
        uploaded = await http.post(
            "/uploadfile", content=ADDRESSES.encode(), headers={"Content-Type": "application/octet-stream"}
        )
        created = await http.get("/createfile")
    tokens = {
        "upload-file": uploaded.json()["UploadFileResult"]["FileToken"],
        "output-file": created.json()["CreateFileResult"]["FileToken"],
    }
    factory = history.session_factory(get_settings().effective_database_url)
    with factory.begin() as session:
        run = history.start_run(session, flow="address-batch", idempotency_key="left-behind")
        for kind, token in tokens.items():
            history.save_remote_job(
                session,
                run,
                api="address-service",
                kind=kind,
                remote_id=token,
                idempotency_key="left-behind",
                change=history.JobChange(status=JobState.SUBMITTED.value),
            )
        history.finish_run(session, run, state="FAILED", error="killed")


async def _address_batch(site: CellSite) -> RunResult:
    from flows.address_batch import address_batch

    return await call(
        address_batch.fn, input_path=site.write("addresses.csv", ADDRESSES), output_dir=site.out, **QUICK_POLL
    )


async def _address_batch_billed(site: CellSite) -> RunResult:
    from flows.address_batch import address_batch

    return await call(
        address_batch.fn,
        input_path=site.write("addresses.csv", ADDRESSES),
        output_dir=site.out,
        billing_reference=BILLING_REFERENCE,
        client_identifier="SMA-1",
        client_name="Seetal Medien AG",
        **QUICK_POLL,
    )


def _address_query(*, billed: bool) -> Run:
    async def run(site: CellSite) -> RunResult:
        from flows.address_query import address_query

        return await call(
            address_query.fn,
            input_path=site.write("addresses.csv", ADDRESSES),
            output_dir=site.out,
            concurrency=1,
            billing_reference=BILLING_REFERENCE if billed else None,
        )

    return run


async def _address_purchase(site: CellSite) -> RunResult:
    from flows.address_purchase import address_purchase

    return await call(
        address_purchase.fn,
        EXAMPLES / "purchase-addresses.csv",
        EXAMPLES / "purchase.json",
        site.out,
        **QUICK_POLL,
    )


def _newspaper_order(*, gratis: bool) -> Run:
    async def run(site: CellSite) -> RunResult:
        from flows.newspaper_order import newspaper_order

        body = order_body(newspaper="5120" if gratis else "4711", gratis=gratis)
        path = site.write("order.json", json.dumps(body))
        return await call(
            newspaper_order.fn, path, site.out, gratis=gratis, waiting_statuses=WAIT_IN_LOADED, **QUICK_POLL
        )

    return run


async def _newspaper_reports(site: CellSite) -> RunResult:
    from flows.newspaper_reports import newspaper_reports

    return await call(newspaper_reports.fn, int((site.folder / "order-id").read_text()), site.out)


async def _newspaper_master_data(site: CellSite) -> RunResult:
    from flows.newspaper_master_data import newspaper_master_data

    return await call(newspaper_master_data.fn, 5120, site.out)


async def _newspaper_statistics(site: CellSite) -> RunResult:
    from flows.newspaper_statistics import newspaper_statistics

    return await call(newspaper_statistics.fn, EXAMPLES / "statistics.csv", site.out)


async def _structure_files(site: CellSite) -> RunResult:
    from flows.structure_files import structure_files

    return await call(structure_files.fn, 9, site.out, notify_email="vertrieb@seetaler-bote.ch")


async def _cleanup(site: CellSite) -> dict[str, Any]:
    from flows.cleanup import cleanup

    return await call(cleanup.fn, older_than_hours=0)


async def _history_report(site: CellSite) -> RunResult:
    from flows.history_report import history_report

    return await call(history_report.fn, output_dir=site.out)


async def _address_validation(site: CellSite) -> RunResult:
    from flows.address_validation import address_validation

    path = site.write("addresses.csv", COMMERCE_ADDRESSES)
    return await call(address_validation.fn, input_path=path, output_dir=site.out, concurrency=1)


async def _deliverability_check(site: CellSite) -> RunResult:
    from flows.deliverability_check import deliverability_check

    path = site.write("addresses.csv", COMMERCE_ADDRESSES)
    return await call(
        deliverability_check.fn,
        input_path=path,
        output_dir=site.out,
        start=dt.date(2025, 3, 3),
        days=3,
        concurrency=1,
    )


async def _deliverability_on_dates(site: CellSite) -> RunResult:
    from flows.deliverability_check import deliverability_check

    path = site.write("addresses.csv", COMMERCE_ADDRESSES)
    return await call(
        deliverability_check.fn,
        input_path=path,
        output_dir=site.out,
        dates="2025-03-03,2025-03-05",
        concurrency=1,
    )


async def _logistic_product(site: CellSite) -> RunResult:
    from flows.logistic_product import logistic_product

    return await call(logistic_product.fn, product_code="SD2", output_dir=site.out)


async def _same_day_acceptance(site: CellSite) -> RunResult:
    from flows.same_day_acceptance import same_day_acceptance

    return await call(
        same_day_acceptance.fn,
        zip_code="8001",
        city="Zürich",
        street="Bahnhofstrasse",
        house_number="1",
        delivery_date=dt.date(2025, 3, 4),
        output_dir=site.out,
    )


async def _delivery_reference_sync(site: CellSite) -> RunResult:
    from flows.delivery_reference_sync import delivery_reference_sync

    return await call(delivery_reference_sync.fn, site.out)


async def _pickup_registration(site: CellSite) -> RunResult:
    from flows.pickup_registration import pickup_registration

    return await call(pickup_registration.fn, site.write("users.csv", PICKUP_USERS), site.out, concurrency=1)


async def _pickup_points(site: CellSite) -> RunResult:
    from flows.pickup_points import pickup_points

    return await call(
        pickup_points.fn, site.write("locations.csv", PICKUP_LOCATIONS), site.out, concurrency=1
    )


async def _address_labels(site: CellSite) -> RunResult:
    from flows.address_labels import address_labels

    return await call(address_labels.fn, site.write("labels.json", LABEL_REQUESTS), site.out, concurrency=1)


async def _return_order(site: CellSite) -> RunResult:
    from flows.return_order import return_order

    return await call(return_order.fn, site.write("return-order.json", RETURN_ORDER), site.out)


CASES: tuple[FlowCase, ...] = (
    FlowCase("address-batch", "address-batch", _address_batch),
    FlowCase(
        "address-batch (billing reference)", "address-batch", _address_batch_billed, new_steps_only=True
    ),
    FlowCase("address-query", "address-query", _address_query(billed=False)),
    FlowCase(
        "address-query (billing reference)", "address-query", _address_query(billed=True), new_steps_only=True
    ),
    FlowCase("address-purchase", "address-purchase", _address_purchase),
    FlowCase("newspaper-order (standard)", "newspaper-order", _newspaper_order(gratis=False)),
    FlowCase("newspaper-order (gratis)", "newspaper-order", _newspaper_order(gratis=True)),
    FlowCase("newspaper-reports", "newspaper-reports", _newspaper_reports, _order_on_the_service),
    FlowCase("newspaper-master-data", "newspaper-master-data", _newspaper_master_data),
    FlowCase("newspaper-statistics", "newspaper-statistics", _newspaper_statistics),
    FlowCase("structure-files", "structure-files", _structure_files),
    FlowCase("cleanup", "cleanup", _cleanup, _files_left_behind),
    FlowCase("address-validation", "address-validation", _address_validation),
    FlowCase("deliverability-check", "deliverability-check", _deliverability_check),
    FlowCase(
        "deliverability-check (dates)", "deliverability-check", _deliverability_on_dates, new_steps_only=True
    ),
    FlowCase("logistic-product", "logistic-product", _logistic_product),
    FlowCase("same-day-acceptance", "same-day-acceptance", _same_day_acceptance),
    FlowCase("delivery-reference-sync", "delivery-reference-sync", _delivery_reference_sync),
    FlowCase("pickup-registration", "pickup-registration", _pickup_registration),
    FlowCase("pickup-points", "pickup-points", _pickup_points),
    FlowCase("address-labels", "address-labels", _address_labels),
    FlowCase("return-order", "return-order", _return_order),
    FlowCase("history-report", "history-report", _history_report),
)
