"""The individual-query flow: every accepted row answered or kept with its error, bounded concurrency,
rate-limit back-off, and the same result files as the batch.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from flows.address_query import address_query
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"


async def test_queries_every_accepted_row_and_writes_results(sandbox: Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = await address_query(input_path=EXAMPLE, output_dir=out, concurrency=4)

    assert summary["failed_queries"] == 0
    assert sandbox.transport.count("/runquery2") == summary["accepted_rows"] == summary["result_rows"]
    results = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert len(results) == summary["accepted_rows"]
    by_customer = results.set_index("KundenNr")
    assert by_customer.loc["1001", "QSTAT"] == "1"
    assert by_customer.loc["1007", "QSTAT"] == "3"
    assert by_customer.loc["1008", "QSTAT"] == "4"
    assert by_customer.loc["1016", "QSTAT"] == "51"
    assert by_customer.loc["1003", "SR14_TownName"].startswith("3")
    assert (out / "results.xlsx").is_file() and (out / "rejected.csv").is_file()


async def test_a_failing_query_keeps_its_row_with_the_reason(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.inject(api="address", endpoint="runquery2", kind="service_status", value=999, after=3, times=1)
    summary = await address_query(input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=1)

    assert summary["failed_queries"] == 1
    results = pd.read_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert len(results) == summary["accepted_rows"]
    failed = results[results["QueryError"] != ""]
    assert len(failed) == 1 and "Status 999" in failed.iloc[0]["QueryError"]


async def test_rate_limit_status_106_slows_down_and_completes(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.inject(api="address", endpoint="runquery2", kind="service_status", value=106, after=2, times=3)
    summary = await address_query(input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=2)
    assert summary["failed_queries"] == 0
    assert sandbox.transport.count("/runquery2") == summary["accepted_rows"] + 3


@pytest.mark.parametrize("concurrency", [1, 16])
async def test_results_do_not_depend_on_concurrency(
    sandbox: Sandbox, tmp_path: Path, concurrency: int
) -> None:
    await address_query(input_path=EXAMPLE, output_dir=tmp_path / "out", concurrency=concurrency)
    results = pd.read_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert list(results["KundenNr"]) == sorted(results["KundenNr"])
    assert results["QSTAT"].ne("").all()
