"""Return orders against the commerce sandbox: the order of a JSON file posted once, its answer written as
received and its id printed; a re-run resumes without posting, a list makes one order each, a lost answer is
uncertain until --resubmit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.return_order import return_order
from postflows.cli import app
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "return-order.json"
ORDERS = "/delivery/collection/order/v2/orders"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_order_is_created_once_and_its_id_printed_again_by_a_rerun(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = invoke("return-order", str(EXAMPLE), "--out", str(out))
    assert code == 0, stderr
    answer = json.loads((out / "return-order.json").read_bytes())  # as received
    assert answer["received"] == ["customerReference", "parcels", "pickupAddress", "pickupDate"]
    assert f"return order: id {answer['id']} (created)" in stderr
    summary = json.loads(stdout)
    assert summary["orders"] == [{"position": 1, "status": "created", "id": answer["id"]}]
    assert sandbox.transport.count(ORDERS) == 1

    code, stdout, stderr = invoke("return-order", str(EXAMPLE), "--out", str(tmp_path / "again"))
    assert code == 0, stderr
    assert sandbox.transport.count(ORDERS) == 1  # one POST across both runs
    assert f"return order: id {answer['id']} (resumed)" in stderr
    assert (tmp_path / "again" / "return-order.json").read_bytes() == (out / "return-order.json").read_bytes()
    assert json.loads(stdout)["resumed"] is True


async def test_a_list_is_one_order_each_in_the_runs_own_folder_by_default(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "returns.json"
    path.write_text(
        json.dumps([{"customerReference": "R-1"}, {"customerReference": "R-2"}]), encoding="utf-8"
    )
    summary = await call(return_order, path)
    folder = flow_env / "return-orders" / "returns"
    assert summary.index == str((folder / "return-orders.csv").resolve())
    index = read_output_csv(folder / "return-orders.csv", dtype=str, keep_default_na=False)
    assert index[["position", "answer", "status"]].values.tolist() == [
        ["1", "return-order-1.json", "created"],
        ["2", "return-order-2.json", "created"],
    ]
    assert index["orderId"].tolist() == [order["id"] for order in summary.orders]
    assert sandbox.transport.count(ORDERS) == 2


def test_a_lost_answer_is_uncertain_until_resubmit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(api="commerce", endpoint="*order/v2/orders", method="POST", kind="lost_answer")
    out = str(tmp_path / "out")

    code, _, stderr = invoke("return-order", str(EXAMPLE), "--out", out)
    assert code == 1
    assert "1 return order(s) may have been created although no answer arrived (positions 1;" in stderr
    assert "--resubmit" in stderr and sandbox.transport.count(ORDERS) == 1
    assert not (tmp_path / "out" / "return-order.json").exists()

    code, _, stderr = invoke("return-order", str(EXAMPLE), "--out", out)
    assert code == 2 and "--resubmit" in stderr  # stopped by an earlier run's uncertain order
    assert sandbox.transport.count(ORDERS) == 1  # not sent again on its own

    code, _, stderr = invoke("return-order", str(EXAMPLE), "--out", out, "--resubmit")
    assert code == 0, stderr
    assert sandbox.transport.count(ORDERS) == 2
    assert "return order: id " in stderr and "(created)" in stderr


def test_a_400_is_uncertain_and_the_next_run_stops_with_exit_2_naming_resubmit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # §7 shows no row for return orders: a 400 does not prove that no order was made (here it was).
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(
        api="commerce", endpoint="*order/v2/orders", method="POST", kind="processed_status", value=400
    )
    out = str(tmp_path / "out")
    code, _, stderr = invoke("return-order", str(EXAMPLE), "--out", out)
    assert code == 1 and "return order 1: the request (commerce: HTTP 400" in stderr, stderr

    code, _, stderr = invoke("return-order", str(EXAMPLE), "--out", out)
    assert code == 2 and "--resubmit" in stderr, stderr
    assert sandbox.transport.count(ORDERS) == 1  # one POST in all


def test_a_path_the_service_does_not_have_fails_naming_the_setting_and_the_right_one_sends_it(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_RETURN_ORDER_PATH", "/delivery/collection/order/v1/orders")
    out = str(tmp_path / "out")
    code, _, stderr = invoke("return-order", str(EXAMPLE), "--out", out)
    assert code == 1, stderr
    (failed,) = [line for line in stderr.splitlines() if line.startswith("failed:")]
    assert "HTTP 404" in failed and "set POSTFLOWS_COMMERCE_RETURN_ORDER_PATH to the service's path" in failed
    assert sandbox.transport.count(ORDERS) == 0

    monkeypatch.delenv("POSTFLOWS_COMMERCE_RETURN_ORDER_PATH")
    code, _, stderr = invoke("return-order", str(EXAMPLE), "--out", out)
    assert code == 0 and "(created)" in stderr, stderr
    assert sandbox.transport.count(ORDERS) == 1


def test_the_command_asks_for_an_output_folder_and_refuses_a_bad_file(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    code, _, stderr = invoke("return-order", str(EXAMPLE))
    assert code == 2 and "--out" in stderr
    path = tmp_path / "order.json"
    path.write_text("{", encoding="utf-8")
    code, _, stderr = invoke("return-order", str(path), "--out", str(tmp_path / "out"))
    assert code == 2 and "line 1, column 2: not JSON" in stderr
    assert sandbox.transport.count(ORDERS) == 0
