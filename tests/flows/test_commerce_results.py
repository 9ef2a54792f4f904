"""The commerce flows' results report the keys their summaries always had: a flow's own fields even when
none, the common fields only when set, and an answer "not kept with the run" nowhere but in the result."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pydantic import ValidationError

from fileio.errors import InputError
from flows.deliverability_check import DaysRequested, DeliverabilityResult
from flows.logistic_product import LogisticProductResult
from flows.pickup_points import PickupPointsResult
from flows.requests import DeliverabilityRequest, OutputOptions, PickupPointsRequest
from flows.row_queries import RowWork
from flows.same_day_acceptance import SameDayAcceptanceResult

NO_ANSWER = {
    "run_id": 7,
    "delivery_date": "2025-03-09",
    "quality": None,
    "products": 0,
    "drop_off_points": 0,
    "no_results": "no results (404): commerce: HTTP 404",
    "path_guess": None,
}


def test_a_same_day_result_reports_its_own_nones_but_not_the_answer_it_carries() -> None:
    result = SameDayAcceptanceResult(**NO_ANSWER, answer=None)

    summary = result.summary()
    assert {name: summary[name] for name in ("quality", "path_guess", "no_results")} == {
        "quality": None,
        "path_guess": None,
        "no_results": NO_ANSWER["no_results"],
    }
    # The common fields that are none are left out, as for every run; the answer is not kept with the run.
    assert "idempotency_key" not in summary and "replaced" not in summary and "answer" not in summary
    assert list(summary)[:2] == ["run_id", "sandbox"]


def test_a_product_result_carries_its_answer_and_names_and_reports_neither() -> None:
    answer = {"productCode": "PRI", "barcode": None}
    names = {"additionalServices": {"SI": "Signature"}, "deliveryInstructions": {}}
    result = LogisticProductResult(
        run_id=1,
        product_code="PRI",
        barcode=None,
        delivery_instructions=0,
        additional_services=1,
        mandatory_services=["SI"],
        answer=answer,
        names=names,
    )

    assert (result.answer, result.names) == (answer, names)
    summary = result.summary()
    assert summary["barcode"] is None and "answer" not in summary and "names" not in summary


def test_pickup_points_without_answers_written_say_so_with_a_none() -> None:
    counts = {"accepted_rows": 1, "rejected_rows": 0, "empty_rows": 0, "failed": 1}
    result = PickupPointsResult(
        run_id=3, **counts, resumed_rows=0, requests_sent=1, locations={"failed": 1}, points=0, answers=None
    )

    assert result.summary()["answers"] is None


def test_a_deliverability_result_names_delivery_dates_only_when_they_were_given() -> None:
    rows = {"input_rows": 2, "accepted_rows": 2, "rejected_rows": 0, "empty_rows": 0, "refused": 0}
    common = {"run_id": 4, **rows, "not_found": 0, "failed": 0, "resumed_rows": 0, "requests_sent": 2}
    days = {"answered": 2, "deliverable_days": 2}
    ranged = DeliverabilityResult(**common, **days, first_day="2025-03-03", days=1)
    listed = DeliverabilityResult(
        **common, **days, first_day="2025-03-03", days=1, delivery_dates=["2025-03-03"]
    )

    assert "delivery_dates" not in ranged.summary()
    assert listed.summary()["delivery_dates"] == ["2025-03-03"]


def test_a_result_refuses_a_key_it_does_not_declare() -> None:
    with pytest.raises(ValidationError, match="unknown"):
        SameDayAcceptanceResult(**NO_ANSWER, answer=None, unknown=1)  # type: ignore[call-arg]


def test_the_days_asked_name_the_first_day_and_the_explicit_dates(tmp_path: Path) -> None:
    source = tmp_path / "addresses.csv"
    source.write_text("PLZ;Ort\n8001;Zürich\n", encoding="utf-8")
    listed = DaysRequested.of(DeliverabilityRequest(input_path=source, dates="2025-03-05,2025-03-03"))
    ranged = DaysRequested.of(DeliverabilityRequest(input_path=source, start=dt.date(2025, 3, 3), days=2))

    assert listed.explicit and listed.identity == {"dates": ["2025-03-03", "2025-03-05"]}
    assert listed.summary() == {
        "first_day": "2025-03-03",
        "days": 2,
        "delivery_dates": listed.identity["dates"],
    }
    assert not ranged.explicit and ranged.identity == {"start": "2025-03-03", "days": 2}
    assert ranged.summary() == {"first_day": "2025-03-03", "days": 2}


def test_the_work_of_a_missing_file_is_refused_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "locations.csv"
    with pytest.raises(InputError, match="input file not found") as refused:
        RowWork.of(PickupPointsRequest(input_path=missing), OutputOptions(output_dir=tmp_path), {})
    assert str(missing) in str(refused.value)


def test_the_work_records_its_identity_among_the_parameters_unless_told_not_to(tmp_path: Path) -> None:
    source = tmp_path / "locations.csv"
    source.write_text("zip\n8001\n", encoding="utf-8")
    work = RowWork.of(
        PickupPointsRequest(input_path=source, concurrency=2),
        OutputOptions(output_dir=tmp_path),
        {"day": "x"},
    )

    given = {"input_path": source, "output_dir": tmp_path, "concurrency": 2}
    assert work.parameters() == {**given, "day": "x"}
    assert work.parameters(with_identity=False) == given
