"""Every flow end to end against the sandbox answering every registered guess the other plausible way
(``guesses="other"``, see docs/guesses.md), with the settings a user with such a contract sets: each run
completes (or ends as the project documents), its result is right, and nothing is submitted twice. Without
those settings, each commerce flow whose path moved ends naming the setting, never with "no results"; a
field or scope the contract spells otherwise ends naming its setting too.

Not here: ``file-arrived``, which talks to no API (it starts the deployment an event names; the flows it
starts are all here).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import history
from connectors.errors import AuthFailed
from connectors.newspaper import NewspaperRejected
from flows.address_batch import address_batch
from flows.address_labels import address_labels
from flows.address_purchase import address_purchase
from flows.address_query import address_query
from flows.address_validation import address_validation
from flows.cleanup import cleanup
from flows.deliverability_check import deliverability_check
from flows.delivery_reference_sync import delivery_reference_sync
from flows.history_report import history_report
from flows.logistic_product import logistic_product
from flows.newspaper_master_data import newspaper_master_data
from flows.newspaper_order import newspaper_order
from flows.newspaper_reports import newspaper_reports
from flows.newspaper_statistics import newspaper_statistics
from flows.pickup_points import pickup_points
from flows.pickup_registration import pickup_registration
from flows.return_order import return_order
from flows.same_day_acceptance import same_day_acceptance
from flows.structure_files import structure_files
from postflows.cli import app
from runtime.settings import get_settings
from sandbox.commerce.delivery_options import PRODUCTS
from sandbox.config import OTHER_COMMERCE_PATHS
from sandbox.newspaper import reference
from tasks.commerce.address_labels import LabelsWithoutPdf
from tasks.commerce.pickup import PickupUncertain
from tasks.polling import PollTimedOut
from tests.clocks import Clock
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_deliverability_check import MONDAY
from tests.flows.test_deliverability_check import _input as deliverability_input
from tests.flows.test_newspaper_order import QUICK, order_body, write_order
from tests.outputs import read_output_csv

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADDRESSES = EXAMPLES / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}
PATHS = OTHER_COMMERCE_PATHS
# The settings of a user whose contract answers every guess the other way (docs/reference/settings.md). The
# pickup points' path is a whole path, not one below the pickup path.
CONTRACT_PATHS = {
    "POSTFLOWS_COMMERCE_SAME_DAY_PATH": PATHS.same_day_path,
    "POSTFLOWS_COMMERCE_PICKUP_PATH": PATHS.pickup_prefix,
    "POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH": PATHS.pickup_points_full_path,
    "POSTFLOWS_COMMERCE_PICKUP_POINTS_METHOD": PATHS.pickup_points_method,
    "POSTFLOWS_COMMERCE_BARCODE_PATH": PATHS.barcode_path,
    "POSTFLOWS_COMMERCE_RETURN_ORDER_PATH": PATHS.return_order_path,
}
CONTRACT_FIELDS = {
    "POSTFLOWS_COMMERCE_SCOPE_VALIDATION": "DCAPI_ADDRESS_VALIDATE",
    "POSTFLOWS_COMMERCE_SCOPE_AUTOCOMPLETE": "DCAPI_ADDRESS_AUTOCOMPLETE",
    "POSTFLOWS_COMMERCE_LABEL_PDF_FIELD": "label.content",
    "POSTFLOWS_NEWSPAPER_STRUCTURE_FILE_EMAIL_FIELD": "emailAddress",
}
ZURICH = {"zip_code": "8001", "city": "Zürich", "street": "Bahnhofstrasse", "house_number": "1"}


@pytest.fixture
def other(other_sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """The sandbox of the other answers, with the contract's settings set."""
    for name, value in {**CONTRACT_PATHS, **CONTRACT_FIELDS}.items():
        monkeypatch.setenv(name, value)
    return other_sandbox


def posts(sandbox: Sandbox, suffix: str) -> int:
    return sum(
        n
        for (method, path), n in sandbox.transport.calls.items()
        if method == "POST" and path.endswith(suffix)
    )


def results(directory: Path, name: str = "results.csv") -> pd.DataFrame:
    return read_output_csv(directory / name, dtype=str, keep_default_na=False)


# --- address service ------------------------------------------------------------------------------------


async def test_address_batch(other: Sandbox, tmp_path: Path) -> None:
    """Jobs that never report Waiting, the output file found whatever its token."""
    out = tmp_path / "out"
    summary = await call(address_batch, input_path=ADDRESSES, output_dir=out, **FAST)
    assert (summary.accepted_rows, summary.rejected_rows, summary.result_rows) == (38, 2, 38)
    by_customer = results(out).set_index("KundenNr")
    assert (by_customer.loc["1001", "QSTAT"], by_customer.loc["1007", "QSTAT"]) == ("1", "3")
    assert len(results(out, "rejected.csv")) == 2
    assert other.transport.count("/runbatch") == 1


async def test_cleanup_deletes_the_files_a_302_left_on_the_service(other: Sandbox, tmp_path: Path) -> None:
    """The first deletefile of each file answers Status 302 and deletes nothing: the batch run leaves both
    files recorded as still on the service, and the clean-up asks again and deletes them."""
    await call(address_batch, input_path=ADDRESSES, output_dir=tmp_path / "out", **FAST)
    assert other.transport.count("/deletefile") == 2
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        files = [
            job for job in session.query(history.RemoteJob) if job.kind in ("upload-file", "output-file")
        ]
    assert len(files) == 2 and all(job.deleted_at is None for job in files)  # still on the service
    summary = await call(cleanup, older_than_hours=0)
    assert len(summary.deleted) == 2 and summary.already_gone == [] and summary.not_deleted == {}
    assert other.transport.count("/deletefile") == 4
    assert other.transport.count("/runbatch") == 1


@pytest.mark.parametrize("billed", [False, True], ids=["runquery2", "runquery2withclient"])
async def test_address_query(other: Sandbox, tmp_path: Path, billed: bool) -> None:
    """Answers without a SettlementId, and under ``RunQuery2WithClientResult`` when billed to a client."""
    client = {"billing_reference": "RRN-0001", "client_identifier": "C-1", "client_name": "Verlag AG"}
    out = tmp_path / "out"
    summary = await call(
        address_query, input_path=ADDRESSES, output_dir=out, concurrency=4, **(client if billed else {})
    )
    assert (summary.failed_queries, summary.uncertain_rows, summary.result_rows) == (0, 0, 38)
    by_customer = results(out).set_index("KundenNr")
    assert (by_customer.loc["1001", "QSTAT"], by_customer.loc["1007", "QSTAT"]) == ("1", "3")
    assert (by_customer.loc["1008", "QSTAT"], by_customer.loc["1016", "QSTAT"]) == ("4", "51")
    method = "/runquery2withclient" if billed else "/runquery2"
    assert other.transport.count(method) == summary.query_sends == 38


# --- newspaper ------------------------------------------------------------------------------------------


@pytest.fixture
def held(other: Sandbox) -> Clock:
    """Orders go LOADED, CONTROL, RELEASED (the other answers' life) over 100 s of a clock only the test
    moves: an order stays LOADED until the test says otherwise."""
    clock = Clock()
    other.config.clock, other.config.job_seconds = clock, 100.0
    return clock


def newspaper_order_file(tmp_path: Path, kind: str, issue: int) -> Path:
    """An order of ``kind`` (standard: 4711; gratis: 5120 with one shipment)."""
    body = order_body(issue=issue)
    if kind == "gratis":
        body["basisInformation"]["newspaperNumber"] = "5120"
        del body["nationalDelivery"]
        body["gratisDelivery"] = {"gratisShipments": [{"locationCategory": "A", "weight": 90}]}
    return write_order(tmp_path, body, f"{kind}-{issue}.json")


@pytest.mark.parametrize("kind", ["standard", "gratis"])
async def test_newspaper_order_waited_to_its_final_status(other: Sandbox, tmp_path: Path, kind: str) -> None:
    """Waiting in LOADED (CONTROL is always waited) the run ends at RELEASED, the other answers' final
    status, with every report: the id read bare (gratis) or in ``{id}``, the lone delivery note read as the
    PDF itself, messages under ``errorMessages``. A re-run resumes the order without a second POST."""
    out = tmp_path / "out"
    order = newspaper_order_file(tmp_path, kind, 101)
    options = {"gratis": kind == "gratis", "waiting_statuses": ["LOADED"], **QUICK}
    summary = await call(newspaper_order, order, out, **options)
    assert summary.status == "RELEASED" and isinstance(summary.order_id, int)
    assert (out / "delivery-note.pdf").read_bytes().startswith(b"%PDF")
    assert json.loads((out / "status.json").read_text())["statusValue"] == "RELEASED"
    corrected = json.loads((out / "corrected-order.json").read_text())
    assert corrected["basisInformation"]["issueNumber"] == {"from": 101}
    again = await call(newspaper_order, order, tmp_path / "again", **options)
    assert again.resumed is True and again.order_id == summary.order_id
    assert other.transport.count(f"/orders/{kind}") == 1


@pytest.mark.parametrize("kind", ["standard", "gratis"])
async def test_newspaper_order_ending_at_loaded_notes_the_corrected_order_not_available(
    other: Sandbox, held: Clock, tmp_path: Path, kind: str
) -> None:
    """The default wait: an order that stays LOADED ends the run at once, its corrected order not
    available yet (0000, read at the end of the message)."""
    out = tmp_path / "out"
    order = newspaper_order_file(tmp_path, kind, 102)
    summary = await call(newspaper_order, order, out, gratis=kind == "gratis", **QUICK)
    assert summary.status == "LOADED"
    assert any("corrected order not available" in note for note in summary.notes)
    assert (out / "delivery-note.pdf").is_file() and not (out / "corrected-order.json").exists()
    assert other.transport.count(f"/orders/{kind}") == 1


async def test_newspaper_reports(other: Sandbox, held: Clock, tmp_path: Path) -> None:
    """An order whose run gave up waiting in LOADED gets its reports from the sweep once it is RELEASED."""
    out = tmp_path / "order"
    with pytest.raises(PollTimedOut):
        await call(
            newspaper_order,
            newspaper_order_file(tmp_path, "standard", 201),
            out,
            waiting_statuses=["LOADED"],
            **{**QUICK, "max_wait_s": 0.3},
        )
    held.now += 100.0
    swept = await call(newspaper_reports)
    (order_id,) = swept.orders
    assert swept.orders == {order_id: "fetched"}
    assert json.loads((out / "status.json").read_text())["statusValue"] == "RELEASED"
    assert json.loads((out / "summary.json").read_text())["totalNewspaper"] == 165
    assert (out / "delivery-note.pdf").read_bytes().startswith(b"%PDF")
    assert (out / "corrected-order.json").is_file() and (out / "report.xlsx").is_file()
    again = await call(newspaper_reports)
    assert again.orders == {order_id: "up to date"}
    assert other.transport.count("/orders/standard") == 1


async def test_newspaper_master_data(other: Sandbox, tmp_path: Path) -> None:
    """The black list as CSV text: kept as received, never reshaped."""
    out = tmp_path / "out"
    summary = await call(newspaper_master_data, 5120, out)
    assert summary.counts["newspaper summary"]["added"] == 1
    assert summary.counts["distribution list"]["added"] == 6  # list header + 5 postcodes
    black_list = (out / "black-list.csv").read_text(encoding="utf-8").splitlines()
    assert len(black_list) == 1 + len(reference.NEWSPAPERS[5120].black_list)
    assert (out / "master-data.xlsx").is_file()
    again = await call(newspaper_master_data, 5120, tmp_path / "again")
    assert again.changes == 0


async def test_newspaper_master_data_of_a_standard_newspaper_notes_it_has_no_lists(
    other: Sandbox, tmp_path: Path
) -> None:
    """0100 read at the end of the message, answered HTTP 200."""
    summary = await call(newspaper_master_data, 4711, tmp_path / "out")
    assert set(summary.counts) == {"newspaper summary"}
    assert any("0100" in note for note in summary.notes)
    assert other.transport.count("/black-list") == 0


async def test_newspaper_statistics(other: Sandbox, tmp_path: Path) -> None:
    """The confirmation as a JSON object: kept as received."""
    summary = await call(newspaper_statistics, EXAMPLES / "statistics.csv", tmp_path / "out")
    assert (summary.input_rows, summary.accepted_rows, summary.rejected_rows) == (4, 4, 0)
    assert summary.confirmation == '{"message": "File uploaded successfully"}'  # as received
    again = await call(newspaper_statistics, EXAMPLES / "statistics.csv", tmp_path / "out")
    assert again.resumed is True
    assert other.transport.count("/standard/statistics") == 1


async def test_address_purchase(other: Sandbox, tmp_path: Path) -> None:
    """The id as ``{"purchaseId": n}``, progress IN_PROGRESS until READY, the output addresses at
    ``outputaddresses``, documents typed ``PDF``; the clean-up option ignored, so its addresses are listed
    as not available. A re-run resumes the purchase without a second POST."""
    out = tmp_path / "out"
    purchase = (EXAMPLES / "purchase-addresses.csv", EXAMPLES / "purchase.json")
    summary = await call(address_purchase, *purchase, out, **QUICK)
    assert (summary.accepted_rows, summary.output_addresses) == (6, 6)
    assert summary.status_codes == {"OK": 4, "CORRECTED": 1, "UNKNOWN": 1}
    assert set(results(out, "output-addresses.csv")["id"]) == {f"A-00{n}" for n in range(1, 7)}
    assert list(summary.documents_not_available) == ["non-reusable-addresses"]
    assert "documents not available" in (out / "summary.md").read_text(encoding="utf-8")
    documents = sorted(path.name for path in (out / "documents").iterdir())
    assert len(documents) == 6 and "non-reusable-addresses.pdf" not in documents
    assert all(path.read_bytes().startswith(b"%PDF") for path in (out / "documents").iterdir())
    again = await call(address_purchase, *purchase, tmp_path / "again", **QUICK)
    assert again.resumed is True and again.purchase_id == summary.purchase_id
    assert posts(other, "/v1/purchases") == 1


async def test_structure_files_with_the_notice_email(other: Sandbox, tmp_path: Path) -> None:
    """The notice e-mail under ``emailAddress``, as the setting says."""
    email = "vertrieb@seetaler-bote.ch"
    summary = await call(structure_files, 9, tmp_path / "out", notify_email=email)
    assert [(f.name, f.new) for f in summary.structure_files] == [
        ("AZ_GZA_v1.zip", True),
        ("AZA_AZB_v1.zip", True),
    ]
    assert summary.confirmation == "E-mail address registered"
    again = await call(structure_files, 1, tmp_path / "again", notify_email=email)
    assert again.new_files == 0 and again.confirmation == "E-mail address registered"
    assert other.transport.count("/structurefiles/email") == 1


# --- commerce -------------------------------------------------------------------------------------------


async def test_address_validation(other: Sandbox, tmp_path: Path) -> None:
    """Validation under DCAPI_ADDRESS_VALIDATE; qualities in lower case, reported as delivered; ``expires``
    in the extended ISO form."""
    out = tmp_path / "out"
    summary = await call(address_validation, input_path=EXAMPLES / "commerce-addresses.csv", output_dir=out)
    counts = summary.model_dump(include={"validated", "refused", "failed", "rejected_rows"})
    assert counts == {"validated": 5, "refused": 0, "failed": 0, "rejected_rows": 1}
    assert summary.quality["certified"] == 3
    by_customer = results(out).set_index("KundenNr")
    assert by_customer.loc["2001", "quality"] == "certified"
    assert by_customer.loc["2001", "houseKey"] != "" and by_customer.loc["2001", "expires"] != ""
    assert by_customer.loc["2002", "Ort (Post)"] == "Kriens"
    assert by_customer.loc["2002", "ChangedFields"] == "city"
    assert other.transport.count("/addresses/validation") == summary.requests_sent == 5


async def test_deliverability_check(other: Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    addresses = deliverability_input(tmp_path)
    summary = await call(deliverability_check, input_path=addresses, output_dir=out, start=MONDAY, days=7)
    assert (summary.answered, summary.not_found, summary.rejected_rows) == (2, 1, 1)
    assert summary.deliverable_days == 12  # two addresses, Monday to Saturday
    kriens = results(out, "deliverability.csv").set_index(["Kunde", "date"]).loc["K1", "deliverable"]
    assert (kriens["2025-03-03"], kriens["2025-03-09"]) == ("yes", "no")
    assert other.transport.count("/deliverabilities/when") == 3


async def test_logistic_product(other: Sandbox, tmp_path: Path) -> None:
    summary = await call(logistic_product, product_code="SD2", output_dir=tmp_path / "out")
    assert summary.answer == PRODUCTS["SD2"] and summary.mandatory_services == ["SI"]
    assert json.loads((tmp_path / "out" / "product.json").read_text(encoding="utf-8")) == PRODUCTS["SD2"]


async def test_delivery_reference_sync(other: Sandbox, tmp_path: Path) -> None:
    first = await call(delivery_reference_sync, tmp_path / "first")
    assert first.counts["holidays"]["added"] >= 18  # this year's and next year's
    assert first.counts["additional services"]["added"] == 5
    again = await call(delivery_reference_sync)
    assert again.changes == 0


async def test_same_day_acceptance(other: Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = await call(same_day_acceptance, **ZURICH, delivery_date=MONDAY, output_dir=out)
    assert (summary.quality, summary.products, summary.drop_off_points) == ("RELIABLE", 2, 3)
    assert summary.no_results is None and summary.path_guess is None
    assert results(out, "acceptance-points.csv")["productCode"].tolist() == ["SD1, SD2", "SD1, SD2", "SD3"]
    assert other.transport.count(PATHS.same_day_path) == 1


def pickup_users(tmp_path: Path) -> Path:
    """The example's users, each with a mobile number: the other answers refuse a notification without one
    (after registering the user)."""
    lines = (EXAMPLES / "pickup-users.csv").read_text(encoding="utf-8").splitlines()
    filled = [lines[0], *(line.replace(",,C-", ",+41790000000,C-") for line in lines[1:])]
    path = tmp_path / "pickup-users.csv"
    path.write_text("\n".join(filled) + "\n", encoding="utf-8")
    return path


async def test_pickup_registration(other: Sandbox, tmp_path: Path) -> None:
    users = pickup_users(tmp_path)
    first = await call(pickup_registration, users, tmp_path / "first")
    assert (first.accepted_rows, first.rejected_rows) == (3, 3)
    assert first.statuses == {"registered": 3, "resumed": 0, "uncertain": 0, "refused": 0}
    registered = results(tmp_path / "first")
    assert registered["customerNo"].tolist() == ["C-1001", "C-1002", "C-1003"]
    assert registered["pickupId"].str.len().min() > 0 and registered["pickupId"].nunique() == 3
    again = await call(pickup_registration, users, tmp_path / "again")
    assert again.statuses == {"registered": 0, "resumed": 3, "uncertain": 0, "refused": 0}
    assert results(tmp_path / "again")["pickupId"].tolist() == registered["pickupId"].tolist()
    assert posts(other, PATHS.pickup_users_path) == 3


async def test_pickup_registration_answered_400_after_registering_is_uncertain(
    other: Sandbox, tmp_path: Path
) -> None:
    """commerce.http-400-groups, the other way: a user without a mobile number is registered, then answered
    400. §7 lists no 400 for pickup users, so those rows are uncertain, never sent again on their own."""
    out = tmp_path / "out"
    with pytest.raises(PickupUncertain, match="--resubmit") as first:
        await call(pickup_registration, EXAMPLES / "pickup-users.csv", out)
    assert first.value.rows == [1, 3] and first.value.exit_code == 1
    assert results(out)["status"].tolist() == ["uncertain", "registered", "uncertain"]
    with pytest.raises(PickupUncertain, match="--resubmit") as again:
        await call(pickup_registration, EXAMPLES / "pickup-users.csv", out)
    assert again.value.exit_code == 2  # stopped by the earlier run's uncertain rows
    assert results(out)["status"].tolist() == ["uncertain", "resumed", "uncertain"]
    assert posts(other, PATHS.pickup_users_path) == 3


async def test_pickup_points(other: Sandbox, tmp_path: Path) -> None:
    """GET at the pickup points' own path, not below the pickup path."""
    out = tmp_path / "out"
    summary = await call(pickup_points, EXAMPLES / "pickup-locations.csv", out)
    assert (summary.accepted_rows, summary.rejected_rows) == (3, 1)
    assert summary.locations == {"ok": 3} and summary.points == 9
    table = results(out, "points.csv")
    assert table["customerNo"].tolist() == ["C-2001"] * 3 + ["C-2002"] * 3 + ["C-2003"] * 3
    assert set(table["status"]) == {"ok"} and table["ppNumber"].str.len().min() > 0
    assert other.transport.calls[("GET", f"/commerce{PATHS.pickup_points_full_path}")] == 3


async def test_address_labels(other: Sandbox, tmp_path: Path) -> None:
    """The PDF under ``label.content``, as the setting says, no ident code beside it; one POST per label
    across a run and its re-run."""
    first = await call(address_labels, EXAMPLES / "address-labels.json", tmp_path / "first")
    assert first.statuses == {"created": 2, "resumed": 0, "uncertain": 0, "refused": 0, "no pdf": 0}
    made = results(tmp_path / "first", "labels.csv")
    assert made[["pdf", "answer", "status"]].values.tolist() == [
        ["label-1.pdf", "label-1.json", "created"],
        ["label-2.pdf", "label-2.json", "created"],
    ]
    assert made["labelId"].str.len().min() > 0 and made["labelId"].nunique() == 2  # the answer's id
    assert (tmp_path / "first" / "label-1.pdf").read_bytes().startswith(b"%PDF-")
    again = await call(address_labels, EXAMPLES / "address-labels.json", tmp_path / "again")
    assert again.statuses["resumed"] == 2
    pdfs = [(tmp_path / run / "label-2.pdf").read_bytes() for run in ("first", "again")]
    assert pdfs[0] == pdfs[1]
    assert results(tmp_path / "again", "labels.csv")["labelId"].tolist() == made["labelId"].tolist()
    assert posts(other, PATHS.barcode_path) == 2


async def test_return_order(other: Sandbox, tmp_path: Path) -> None:
    first = await call(return_order, EXAMPLES / "return-order.json", tmp_path / "first")
    answer = json.loads((tmp_path / "first" / "return-order.json").read_bytes())
    assert first.orders == [{"position": 1, "status": "created", "id": answer["id"]}]
    again = await call(return_order, EXAMPLES / "return-order.json", tmp_path / "again")
    assert again.resumed is True and again.orders[0]["id"] == answer["id"]
    assert posts(other, PATHS.return_order_path) == 1


async def test_history_report(other: Sandbox, tmp_path: Path) -> None:
    """The report reads the runs made against the other answers (queries without a SettlementId)."""
    await call(address_query, input_path=ADDRESSES, output_dir=tmp_path / "queries")
    summary = await call(history_report, output_dir=tmp_path / "report")
    assert (summary.address_runs, summary.api_runs) == (1, 1)
    assert all(Path(path).stat().st_size > 0 for path in summary.report)


# --- our defaults against the other answers -------------------------------------------------------------


@pytest.fixture
def defaults(other_sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """The sandbox of the other answers, the settings left at our defaults."""
    monkeypatch.setenv("COLUMNS", "200")
    return other_sandbox


@pytest.mark.parametrize(
    ("command", "example", "setting", "moved", "requests"),
    [
        ("pickup-register", "pickup-users.csv", "PICKUP_PATH", PATHS.pickup_users_path, 3),
        ("pickup-points", "pickup-locations.csv", "PICKUP_POINTS_PATH", PATHS.pickup_points_full_path, 3),
        ("address-labels", "address-labels.json", "BARCODE_PATH", PATHS.barcode_path, 2),
        ("return-order", "return-order.json", "RETURN_ORDER_PATH", PATHS.return_order_path, 1),
    ],
)
def test_a_moved_path_ends_with_exit_1_naming_its_setting_and_the_setting_sends_them(
    defaults: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    example: str,
    setting: str,
    moved: str,
    requests: int,
) -> None:
    """Nothing is at our path: exit 1 naming the setting, never "no results"; nothing was processed, so
    with the setting the same command sends each request once (no --resubmit)."""
    out = str(tmp_path / "out")
    given = str(pickup_users(tmp_path) if command == "pickup-register" else EXAMPLES / example)
    failed = CliRunner().invoke(app, [command, given, "--out", out])
    assert failed.exit_code == 1, failed.output
    (line,) = [line for line in failed.output.splitlines() if line.startswith("failed:")]
    assert "HTTP 404" in line and f"set POSTFLOWS_COMMERCE_{setting}" in line and "no results" not in line
    for name, value in {**CONTRACT_PATHS, **CONTRACT_FIELDS}.items():
        monkeypatch.setenv(name, value)
    sent = CliRunner().invoke(app, [command, given, "--out", out])
    assert sent.exit_code == 0, sent.output
    sent_to_moved = sum(n for (_, path), n in defaults.transport.calls.items() if path == f"/commerce{moved}")
    assert sent_to_moved == requests


async def test_same_day_at_our_path_is_no_results_noted_as_a_guess(defaults: Sandbox, tmp_path: Path) -> None:
    """§7 lists 404 for same-day acceptance: our path's 404 reads "no results (404)", and the summary notes
    that the path is a guess, naming its setting."""
    out = tmp_path / "out"
    summary = await call(same_day_acceptance, **ZURICH, delivery_date=MONDAY, output_dir=out)
    assert summary.answer is None and summary.drop_off_points == 0
    assert summary.no_results.startswith("no results (404): ")
    assert "POSTFLOWS_COMMERCE_SAME_DAY_PATH) is a guess" in summary.path_guess
    assert f"> Note: {summary.path_guess}" in (out / "summary.md").read_text(encoding="utf-8")


async def test_our_scope_and_fields_end_naming_their_settings(
    defaults: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope, an e-mail field or a label field the contract spells otherwise ends the run naming it: the
    scope asked for, the e-mail field's setting (the registration uncertain), the label field's setting (the
    answers kept)."""
    with pytest.raises(AuthFailed, match="DCAPI_ADDRESS_READ"):
        await call(
            address_validation, input_path=EXAMPLES / "commerce-addresses.csv", output_dir=tmp_path / "v"
        )
    with pytest.raises(NewspaperRejected, match="POSTFLOWS_NEWSPAPER_STRUCTURE_FILE_EMAIL_FIELD"):
        await call(structure_files, 1, tmp_path / "s", notify_email="vertrieb@seetaler-bote.ch")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_BARCODE_PATH", PATHS.barcode_path)
    with pytest.raises(LabelsWithoutPdf, match="POSTFLOWS_COMMERCE_LABEL_PDF_FIELD"):
        await call(address_labels, EXAMPLES / "address-labels.json", tmp_path / "l")
