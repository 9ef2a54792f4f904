"""The address flows' result models: their fields are the run summary's keys, a count a run cannot give is
absent from the summary, and a key no model knows is refused rather than lost."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from flows.address_results import AddressBatchPlan, AddressBatchResult, AddressQueryResult

COUNTS = {"run_id": 3, "accepted_rows": 4, "rejected_rows": 1, "house_numbers_split": 0}


def test_a_batch_without_corrections_reports_no_correction_keys() -> None:
    result = AddressBatchResult(**COUNTS, result_rows=4, qstat={"1": 4}, moves=0)
    summary = result.summary()
    assert summary["qstat"] == {"1": 4} and summary["moves"] == 0 and summary["sandbox"] is False
    assert not {"corrected_rows", "corrections", "needs_human", "writeback", "sheet"} & set(summary)
    assert not {"record_id_returned_in", "replaced", "took_up_interrupted_run"} & set(summary)


def test_a_batch_with_corrections_and_a_write_back_reports_them_under_their_keys() -> None:
    writeback = {"policy": "certain", "path": "/out/writeback.csv", "rows": 4, "cells_changed": 2}
    result = AddressBatchResult(
        **COUNTS,
        result_rows=4,
        qstat={"1": 3, "51": 1},
        moves=1,
        corrected_rows=2,
        corrections={"street": 2},
        needs_human=1,
        writeback=writeback,
        record_id_returned_in="KDNR",
    )
    summary = result.summary()
    assert (summary["corrected_rows"], summary["corrections"], summary["needs_human"]) == (
        2,
        {"street": 2},
        1,
    )
    assert summary["writeback"] == writeback and summary["record_id_returned_in"] == "KDNR"


def test_a_dry_run_says_so_and_names_its_files() -> None:
    plan = AddressBatchPlan(**COUNTS, upload="/out/upload.txt", plan="/out/plan.json", problem="no merge")
    summary = plan.summary()
    assert summary["dry_run"] is True and summary["plan"] == "/out/plan.json"
    assert summary["problem"] == "no merge" and "result_rows" not in summary


def test_a_key_no_model_knows_is_refused() -> None:
    with pytest.raises(ValidationError, match="failed_rows"):
        AddressQueryResult.model_validate(
            {
                **COUNTS,
                "result_rows": 4,
                "qstat": {},
                "failed_queries": 0,
                "uncertain_rows": 0,
                "query_sends": 4,
                "resumed_rows": 0,
                "resubmitted_rows": 0,
                "failed_rows": 0,
            }
        )
