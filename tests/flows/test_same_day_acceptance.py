"""The same-day acceptance flow against the commerce sandbox: a GET carrying the JSON body of §2.8 at the
configured path, one row per product and drop-off point in the files, today (Swiss time) by default; the
service's 404 is "no results (404)", noted as an answer at a guessed path, a 405 fails naming the path's
setting, a long answer is kept whole in the files and shown in part, an answer over the response limit and
one that cannot be read fail the run naming the cause."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from openpyxl import load_workbook

import history
from connectors.errors import MalformedResponse, ResponseTooLarge
from flows.same_day_acceptance import same_day_acceptance
from runtime.settings import get_settings
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

ZURICH = {"zip_code": "8001", "city": "Zürich", "street": "Bahnhofstrasse", "house_number": "1"}
TUESDAY = dt.date(2025, 3, 4)
ACCEPTANCE = "/sameday/acceptancepoints"


def _run(run_id: int) -> history.Run:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        run = history.get_run(session, run_id)
        assert run is not None
        return run


class Answering(httpx.AsyncBaseTransport):
    """The sandbox transport, keeping what the same-day request carried and answering it with ``answer``
    (when set) instead of the sandbox."""

    def __init__(self, inner: httpx.AsyncBaseTransport, answer: httpx.Response | None = None) -> None:
        self.inner, self.answer = inner, answer
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path.endswith(ACCEPTANCE):
            self.sent.append((request.method, json.loads(request.content)))
            if self.answer is not None:
                await response.aread()
                return self.answer
        return response


def _answering(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, answer: httpx.Response | None = None
) -> Answering:
    transport = Answering(sandbox.transport, answer)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: transport)
    return transport


async def test_acceptance_points_in_the_files_and_the_run(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = _answering(sandbox, monkeypatch)
    out = tmp_path / "out"
    summary = await call(same_day_acceptance, **ZURICH, delivery_date=TUESDAY, output_dir=out)

    assert sent.sent == [
        (
            "GET",
            {
                "address": {
                    "geographicLocation": {
                        "house": {"street": "Bahnhofstrasse", "houseNumber": "1"},
                        "zip": {"zip": "8001", "city": "Zürich"},
                    }
                },
                "deliveryDate": "2025-03-04",
            },
        )
    ]
    assert (summary.quality, summary.products, summary.drop_off_points) == ("RELIABLE", 2, 3)
    assert summary.no_results is None
    assert [result["productCode"] for result in summary.answer["results"]] == ["SD1,SD2", "SD3"]
    points = read_output_csv(out / "acceptance-points.csv", dtype=str, keep_default_na=False)
    assert points["productCode"].tolist() == ["SD1, SD2", "SD1, SD2", "SD3"]
    first = points.iloc[0]
    assert (first["description"], first["zip"], first["city"], first["lastDropOffTime"]) == (
        "Postfiliale Zürich",
        "8001",
        "Zürich",
        "10:00",
    )
    sheet = load_workbook(out / "acceptance-points.xlsx")["Acceptance points"]
    assert sheet.max_row == 4 and sheet.cell(row=2, column=5).value == "8001"  # a zip stays text
    assert "| drop-off points | 3 |" in (out / "summary.md").read_text(encoding="utf-8")
    run = _run(summary.run_id)
    assert run.state == "COMPLETED" and run.parameters["deliveryDate"] == "2025-03-04"
    assert run.summary is not None and "answer" not in run.summary


async def test_the_day_is_today_in_switzerland_by_default(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("flows.same_day_acceptance.swiss_today", lambda: TUESDAY)
    sent = _answering(sandbox, monkeypatch)
    summary = await call(same_day_acceptance, **ZURICH)
    assert summary.delivery_date == "2025-03-04" and sent.sent[0][1]["deliveryDate"] == "2025-03-04"
    assert summary.files == []


async def test_the_services_404_is_no_results_and_the_run_completes(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    sunday = TUESDAY + dt.timedelta(days=5)
    summary = await call(same_day_acceptance, **ZURICH, delivery_date=sunday, output_dir=out)

    assert summary.answer is None and summary.drop_off_points == 0
    assert summary.no_results.startswith("no results (404): commerce: HTTP 404")
    assert "no same-day service on 2025-03-09" in summary.no_results
    assert read_output_csv(out / "acceptance-points.csv", dtype=str).empty
    report = (out / "summary.md").read_text(encoding="utf-8")
    assert "No acceptance points: no results (404): " in report
    # The path is a guess (the spec shows none), and a wrong one answers 404 as well: the summary says so.
    assert "POSTFLOWS_COMMERCE_SAME_DAY_PATH) is a guess" in summary.path_guess
    assert "`postflows doctor --live` checks it" in summary.path_guess
    assert f"> Note: {summary.path_guess}" in report
    run = _run(summary.run_id)
    assert run.state == "COMPLETED"
    assert run.summary is not None and run.summary["path_guess"] == summary.path_guess


async def test_a_path_the_service_does_not_have_reads_as_no_results_noted_as_a_guess(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_COMMERCE_SAME_DAY_PATH", "/api/delivery/v1/sameday/points")
    out = tmp_path / "out"
    summary = await call(same_day_acceptance, **ZURICH, delivery_date=TUESDAY, output_dir=out)
    assert summary.no_results.startswith("no results (404): ")
    assert summary.path_guess.startswith("the path /api/delivery/v1/sameday/points (")
    assert "is a guess" in (out / "summary.md").read_text(encoding="utf-8")


async def test_an_answer_with_points_notes_no_guess(sandbox: Sandbox, flow_env: Path) -> None:
    summary = await call(same_day_acceptance, **ZURICH, delivery_date=TUESDAY)
    assert summary.drop_off_points == 3 and summary.path_guess is None


async def test_a_path_without_get_fails_the_run_naming_the_setting(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from connectors.commerce.errors import GuessedPathNotFound

    monkeypatch.setenv("POSTFLOWS_COMMERCE_SAME_DAY_PATH", "/address/v1/addresses/validation")  # POST only
    with pytest.raises(GuessedPathNotFound, match="POSTFLOWS_COMMERCE_SAME_DAY_PATH") as raised:
        await call(same_day_acceptance, **ZURICH, delivery_date=TUESDAY)
    assert raised.value.status_code == 405


async def test_a_refused_request_fails_the_run_naming_the_field(sandbox: Sandbox, flow_env: Path) -> None:
    from connectors.commerce import CommerceRejected

    with pytest.raises(CommerceRejected, match="house.street is required"):
        await call(same_day_acceptance, zip_code="8001", delivery_date=TUESDAY)


def _long_answer(points: int) -> dict[str, Any]:
    drop_offs = [
        {
            "dropOffPoint": {
                "technicalZip": f"{8000 + n % 1000}00",
                "description": f"Annahmestelle {n}",
                "street": "Bahnhofstrasse",
                "streetNumber": str(n),
                "zip": {"zip": str(8000 + n % 1000), "city": "Zürich"},
            },
            "lastDropOffTime": "10:00",
        }
        for n in range(points)
    ]
    return {"quality": "RELIABLE", "results": [{"productCode": "SD1,SD2", "dropOffInfo": drop_offs}]}


async def test_a_long_answer_is_kept_whole_in_the_files_and_shown_in_part(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _answering(sandbox, monkeypatch, httpx.Response(200, json=_long_answer(3000)))
    out = tmp_path / "out"
    summary = await call(same_day_acceptance, **ZURICH, delivery_date=TUESDAY, output_dir=out)

    assert summary.drop_off_points == 3000
    assert len(read_output_csv(out / "acceptance-points.csv", dtype=str)) == 3000
    report = (out / "summary.md").read_text(encoding="utf-8")
    assert "Annahmestelle 49 |" in report and "Annahmestelle 50 |" not in report
    assert "_… 2950 more rows_" in report


async def test_an_answer_over_the_response_limit_fails_naming_the_setting(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_RESPONSE_MAX_BYTES", "100000")
    _answering(sandbox, monkeypatch, httpx.Response(200, json=_long_answer(3000)))
    with pytest.raises(ResponseTooLarge, match="POSTFLOWS_RESPONSE_MAX_BYTES"):
        await call(same_day_acceptance, **ZURICH, delivery_date=TUESDAY)


async def test_an_answer_that_cannot_be_read_fails_the_run(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = httpx.Response(200, json={"quality": "RELIABLE", "results": [{"dropOffInfo": []}]})
    _answering(sandbox, monkeypatch, answer)
    with pytest.raises(
        MalformedResponse, match="same-day acceptance points cannot be read: results.0.productCode"
    ):
        await call(same_day_acceptance, **ZURICH, delivery_date=TUESDAY)


def test_a_postcode_has_four_digits() -> None:
    from pydantic import ValidationError

    from flows.requests import SameDayAcceptanceRequest

    assert SameDayAcceptanceRequest(zip_code=" 8001 ").zip_code == "8001"
    with pytest.raises(ValidationError, match="a postcode has 4 digits, got '800'"):
        SameDayAcceptanceRequest(zip_code="800")
