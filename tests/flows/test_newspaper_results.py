"""The results of the newspaper flows, the address purchase and the structure files print the keys their
summaries always had: a key that was there with null stays, one noted only when it applies stays away."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from flows.address_purchase import AddressPurchaseResult
from flows.newspaper_master_data import MasterDataSweepResult
from flows.newspaper_order import NewspaperOrderResult
from flows.newspaper_reports import ReportsResult
from flows.newspaper_statistics import StatisticsInboxResult, StatisticsResult
from flows.structure_files import ListedFile, StructureFilesResult

ROWS = {"input_rows": 4, "accepted_rows": 4, "rejected_rows": 0}


def test_an_order_names_its_errors_only_when_the_answer_had_some() -> None:
    order = {"run_id": 1, "order_id": 7, "status": "LOADED", "warnings": [], "notes": []}
    assert "errors" not in NewspaperOrderResult(**order).summary()
    taken = NewspaperOrderResult(**order, errors=["standard order 7: 0030 weight"])
    assert taken.summary()["errors"] == ["standard order 7: 0030 weight"]


def test_one_orders_reports_name_kind_and_status_even_when_null() -> None:
    printed = ReportsResult(run_id=1, order_id=7, kind=None, status=None, warnings=[], notes=[]).summary()
    assert printed["kind"] is None and printed["status"] is None and printed["order_id"] == 7


def test_statistics_sent_name_the_confirmation_and_statistics_not_due_do_not() -> None:
    day = {"submission_date": "2025-03-28", "closes": {"AZ": True}}
    sent = StatisticsResult(run_id=1, **ROWS, **day, confirmation=None, warnings=[]).summary()
    assert sent["confirmation"] is None and sent["warnings"] == [] and "not_due" not in sent
    not_due = StatisticsResult(
        run_id=2, **ROWS, **day, sent=False, not_due="not due: …", due_on="2025-03-31"
    ).summary()
    assert "confirmation" not in not_due and "warnings" not in not_due
    assert (not_due["sent"], not_due["due_on"]) == (False, "2025-03-31")


def test_structure_files_name_the_notice_address_even_when_none_was_given() -> None:
    listed = ListedFile(name="AZ_GZA_v1.zip", path="/data/AZ_GZA_v1.zip", sha256="ab", new=True)
    result = StructureFilesResult(
        run_id=1,
        file_code=1,
        structure_files=[listed],
        new_files=1,
        notice_email=None,
        confirmation=None,
        warnings=[],
    )
    printed = result.summary()
    assert printed["notice_email"] is None and printed["confirmation"] is None
    assert printed["structure_files"] == [
        {"name": "AZ_GZA_v1.zip", "path": "/data/AZ_GZA_v1.zip", "sha256": "ab", "new": True}
    ]


def test_the_runs_over_several_items_print_every_key() -> None:
    synced = MasterDataSweepResult(newspapers=[4711], changes={4711: 2}, failed={}, sandbox=False)
    assert synced.summary() == {"newspapers": [4711], "changes": {"4711": 2}, "failed": {}, "sandbox": False}
    inbox = StatisticsInboxResult(inbox="/in", sent={"q1.csv": "/in/sent/q1.csv"}, not_due={}, failed={})
    assert set(inbox.summary()) == {"inbox", "sent", "not_due", "failed"}


def test_a_result_refuses_a_key_it_does_not_know() -> None:
    with pytest.raises(ValidationError, match="status_code"):
        AddressPurchaseResult(
            run_id=1,
            **ROWS,
            purchase_id=3,
            output_addresses=0,
            status_codes={},
            documents={},
            documents_not_available={},
            warnings=[],
            status_code="OK",
        )
