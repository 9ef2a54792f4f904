"""Pickup registration against the sandbox, from the flow and from the command: bad rows rejected before any
call, ids written beside the rows, a re-run resumes without a POST, a lost answer waits for --resubmit and
then gets the same id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from connectors.commerce import PickupUserRequest
from flows.pickup_registration import pickup_registration
from postflows.cli import app
from runtime.settings import get_settings
from runtime.wiring import commerce_client
from tasks.commerce.pickup import PickupUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pickup-users.csv"
USERS = "/pickup/v1/users"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def summary_of(output: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.JSONDecoder().raw_decode(output[output.index("{\n") :])[0]
    return parsed


def results(directory: Path) -> pd.DataFrame:
    return read_output_csv(directory / "results.csv", dtype=str, keep_default_na=False)


async def test_good_rows_registered_bad_rows_rejected_and_a_rerun_resumes(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    first = await call(pickup_registration, EXAMPLE, tmp_path / "first")
    assert first.accepted_rows == 3 and first.rejected_rows == 3
    assert first.statuses == {"registered": 3, "resumed": 0, "uncertain": 0, "refused": 0}
    assert sandbox.transport.count(USERS) == 3
    rejected = read_output_csv(tmp_path / "first" / "rejected.csv", dtype=str, keep_default_na=False)
    assert rejected[["customerNo", "line", "row"]].values.tolist() == [
        ["C-1004", "5", "4"],
        ["C-1005", "6", "5"],
        ["C-1006", "7", "6"],
    ]
    assert rejected["problems"].str.split(":").str[0].tolist() == ["lastName", "zip", "email"]
    registered = results(tmp_path / "first")
    assert registered.columns.tolist()[:3] == [
        "customerNo",
        "line",
        "row",
    ]  # named as rejected.csv names rows
    assert registered["row"].tolist() == ["1", "2", "3"]
    assert registered["customerNo"].tolist() == ["C-1001", "C-1002", "C-1003"]  # input columns kept
    assert registered["status"].tolist() == ["registered"] * 3
    assert registered["verified"].tolist() == ["NONE"] * 3
    assert registered["pickupId"].str.len().min() > 0 and registered["pickupId"].nunique() == 3
    assert (tmp_path / "first" / "results.xlsx").is_file()

    again = await call(pickup_registration, EXAMPLE, tmp_path / "again")
    assert again.statuses == {"registered": 0, "resumed": 3, "uncertain": 0, "refused": 0}
    assert sandbox.transport.count(USERS) == 3  # no new POST
    resumed = results(tmp_path / "again")
    assert resumed["pickupId"].tolist() == registered["pickupId"].tolist()
    assert set(resumed["message"]) == {"registered by an earlier run"}


def test_lost_answer_is_uncertain_until_resubmit_which_gets_the_same_id(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(api="commerce", endpoint="*pickup/v1/users", method="POST", kind="lost_answer", after=1)
    out = tmp_path / "out"

    code, output = invoke("pickup-register", str(EXAMPLE), "--out", str(out), "--concurrency", "1")
    assert code == 1, output
    assert "may have been registered although no answer arrived (rows 2;" in output and "--resubmit" in output
    first = results(out)
    assert first["status"].tolist() == ["registered", "uncertain", "registered"]
    assert first.loc[1, "pickupId"] == "" and "--resubmit" in first.loc[1, "message"]
    assert sandbox.transport.count(USERS) == 3

    code, output = invoke("pickup-register", str(EXAMPLE), "--out", str(out))
    assert code == 2 and "--resubmit" in output  # stopped by an earlier run's uncertain row
    assert sandbox.transport.count(USERS) == 3  # the uncertain row is not sent again on its own
    assert results(out)["status"].tolist() == ["resumed", "uncertain", "resumed"]

    code, output = invoke("pickup-register", str(EXAMPLE), "--out", str(out), "--resubmit")
    assert code == 0, output
    assert summary_of(output)["statuses"] == {"registered": 1, "resumed": 2, "uncertain": 0, "refused": 0}
    assert sandbox.transport.count(USERS) == 4
    final = results(out)
    assert final["status"].tolist() == ["resumed", "registered", "resumed"]
    # The lost request had registered Anna: the sandbox answers her id again, and so it does now.
    assert final.loc[1, "pickupId"] == _registered_id(final.loc[1])


async def test_an_uncertain_row_fails_the_run_naming_why_its_answer_never_came(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(api="commerce", endpoint="*pickup/v1/users", method="POST", kind="http_status", value=503)
    with pytest.raises(
        PickupUncertain,
        match=r"row 1: the request \(commerce: HTTP 503 .*\) got no answer that proves it was not processed",
    ):
        await call(pickup_registration, EXAMPLE, tmp_path / "out", concurrency=1)
    assert sandbox.transport.count(USERS) == 3


def test_a_400_is_uncertain_and_the_next_run_stops_with_exit_2_naming_resubmit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # §7 lists 200, 403 and 500 for pickup users: a 400 does not prove the user was not registered.
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(
        api="commerce",
        endpoint="*pickup/v1/users",
        method="POST",
        kind="processed_status",
        value=400,
        times=1,
    )
    out = str(tmp_path / "out")
    code, output = invoke("pickup-register", str(EXAMPLE), "--out", out, "--concurrency", "1")
    assert code == 1 and "row 1: the request (commerce: HTTP 400" in output, output
    assert results(tmp_path / "out")["status"].tolist() == ["uncertain", "registered", "registered"]

    code, output = invoke("pickup-register", str(EXAMPLE), "--out", out)
    assert code == 2 and "--resubmit" in output, output
    assert sandbox.transport.count(USERS) == 3  # one POST per row in all


def test_a_pickup_path_the_service_does_not_have_fails_naming_the_setting_and_the_right_one_sends_them(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_PICKUP_PATH", "/pickpost/v1")  # the sandbox serves /pickup/v1
    out = str(tmp_path / "out")
    code, output = invoke("pickup-register", str(EXAMPLE), "--out", out)
    assert code == 1, output
    (failed,) = [line for line in output.splitlines() if line.startswith("failed:")]
    assert "HTTP 404" in failed and "POST /commerce/pickpost/v1/users" in failed
    assert "set POSTFLOWS_COMMERCE_PICKUP_PATH to the service's path" in failed
    assert sandbox.transport.count(USERS) == 0

    monkeypatch.delenv("POSTFLOWS_COMMERCE_PICKUP_PATH")
    code, output = invoke("pickup-register", str(EXAMPLE), "--out", out)
    assert code == 0, output  # not processed: nothing waits for --resubmit
    assert summary_of(output)["statuses"] == {"registered": 3, "resumed": 0, "uncertain": 0, "refused": 0}


def _registered_id(row: pd.Series) -> str:
    import asyncio

    request = PickupUserRequest.model_validate(
        {
            "userDetails": {"firstName": row["firstName"], "lastName": row["lastName"]},
            "address": {
                "house": {"street": row["street"], "houseNumber": row["houseNumber"]},
                "zip": {"zip": row["zip"], "city": row["city"], "countryCode": row["countryCode"]},
            },
            "notification": {"email": row["email"]},
        }
    )

    async def register() -> str:
        async with commerce_client(get_settings()) as client:
            return (await client.register_pickup_user(request)).id

    return asyncio.run(register())


def test_no_good_row_exits_2_naming_rejected_csv(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_CSV_DIALECT", "excel")  # the option below sets it for the process
    path = tmp_path / "bad.csv"
    path.write_text("firstName,lastName,zip\nHans,,8001\n", encoding="utf-8")
    code, output = invoke(
        "--csv-dialect", "rfc4180", "pickup-register", str(path), "--out", str(tmp_path / "out")
    )
    assert code == 2
    assert "no row passed the checks" in output and "rejected.csv" in output
    assert (tmp_path / "out" / "rejected.csv").read_bytes() == (
        b"firstName,line,row,problems,values\r\n"
        b"Hans,2,1,lastName: missing; email: missing: notifyMode EMAIL needs it,\r\n"
    )  # one line per row, all its problems in it
    assert sandbox.transport.count(USERS) == 0
