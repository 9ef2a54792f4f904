"""The newspaper CLI commands end to end against the in-process sandbox: exit code 0 with the run summary as
JSON, or a non-zero exit with a one-line reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deployments.serve import deployments
from postflows.cli import app
from tests.flows.conftest import Sandbox

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def summary_of(output: str) -> dict[str, Any]:
    start = output.index("{\n")
    parsed: dict[str, Any] = json.JSONDecoder().raw_decode(output[start:])[0]
    return parsed


def failure_line(output: str) -> str:
    [line] = [
        line
        for line in output.splitlines()
        if line.startswith(("failed:", "refused:", "configuration error:"))
    ]
    return line


def test_order_then_reports(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    code, output = invoke(
        "newspaper-order", str(EXAMPLES / "newspaper-order.json"), "--out", str(tmp_path / "order"),
        "--poll-interval", "0.05",
    )  # fmt: skip
    assert code == 0, output
    order = summary_of(output)
    # The sandbox keeps an order LOADED: the run ends after one look at the status.
    assert order["status"] == "LOADED" and (tmp_path / "order" / "report.xlsx").is_file()
    assert sandbox.transport.count("/status") == 1

    code, output = invoke("newspaper-reports", str(order["order_id"]), "--out", str(tmp_path / "reports"))
    assert code == 0, output
    reports = summary_of(output)
    assert reports["kind"] == "standard" and reports["status"] == "LOADED"
    assert (tmp_path / "reports" / "original-order.json").is_file()

    # Without an order id: the recorded orders whose reports are due; this one's are up to date.
    code, output = invoke("newspaper-reports", "--days", "7")
    assert code == 0, output
    assert summary_of(output)["orders"] == {str(order["order_id"]): "up to date"}
    assert sandbox.transport.count("/summary") == 2


def test_an_order_waits_in_the_statuses_named(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    sandbox.config.order_statuses = ("LOADED", "CONTROL", "DONE")
    sandbox.config.job_seconds = 3  # a status before DONE is still there when a loaded machine first asks
    code, output = invoke(
        "newspaper-order", str(EXAMPLES / "newspaper-order.json"), "--out", str(tmp_path / "order"),
        "--poll-interval", "0.05", "--wait-status", "LOADED",
    )  # fmt: skip
    assert code == 0, output
    assert summary_of(output)["status"] == "DONE" and sandbox.transport.count("/status") > 1


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--out", "reports"], "--out and --gratis/--standard name one order"),
        (["--standard"], "--out and --gratis/--standard name one order"),
        (["7000001", "--days", "3"], "--days is for a sweep of recent orders"),
        (["--days", "0"], "0 is not in the range"),
    ],
)
def test_reports_options_of_one_order_and_of_a_sweep_do_not_mix(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], reason: str
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, output = invoke("newspaper-reports", *args)
    assert code == 2 and reason in output
    assert sum(sandbox.transport.calls.values()) == 0


def test_gratis_example_order(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    code, output = invoke(
        "newspaper-order", str(EXAMPLES / "newspaper-gratis-order.json"), "--gratis", "--out", str(tmp_path),
        "--poll-interval", "0.05",
    )  # fmt: skip
    assert code == 0, output
    assert summary_of(output)["status"] == "LOADED"


def test_invalid_order_is_refused_with_one_line(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    body = json.loads((EXAMPLES / "newspaper-order.json").read_text())
    body["basisInformation"]["deliveryDate"] = "2001-01-01"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(body))
    code, output = invoke("newspaper-order", str(path), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "basisInformation.deliveryDate: 2001-01-01 is in the past" in failure_line(output)
    assert sum(sandbox.transport.calls.values()) == 0


def test_sync_and_unknown_newspaper(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    code, output = invoke("newspaper-sync", "5120", "--out", str(tmp_path / "sync"))
    assert code == 0, output
    assert summary_of(output)["counts"]["black list"]["added"] == 2
    code, output = invoke("newspaper-sync", "1234", "--out", str(tmp_path / "unknown"))
    assert code == 1
    assert "0002" in failure_line(output)


def test_statistics(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    code, output = invoke("newspaper-statistics", str(EXAMPLES / "statistics.csv"), "--out", str(tmp_path))
    assert code == 0, output
    assert summary_of(output)["accepted_rows"] == 4
    code, output = invoke("newspaper-statistics", str(EXAMPLES / "statistics.csv"), "--interval", "AZQ")
    assert code == 2


def test_purchase(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    code, output = invoke(
        "address-purchase", str(EXAMPLES / "purchase-addresses.csv"),
        "--params", str(EXAMPLES / "purchase.json"), "--out", str(tmp_path), "--poll-interval", "0.05",
    )  # fmt: skip
    assert code == 0, output
    assert summary_of(output)["output_addresses"] == 6
    assert (tmp_path / "documents" / "sort-protocol.pdf").is_file()


def test_structure_files(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    code, output = invoke(
        "structure-files", "9", "--out", str(tmp_path), "--notify", "vertrieb@seetaler-bote.ch"
    )
    assert code == 0, output
    assert summary_of(output)["new_files"] == 2
    code, output = invoke("structure-files", "3", "--out", str(tmp_path))
    assert code == 2


def test_real_endpoint_without_credentials_is_a_configuration_error(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_URL", "https://newspaper.example.invalid")
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_CLIENT_ID", "client")
    code, output = invoke("newspaper-sync", "4711", "--out", str(tmp_path))
    assert code == 2
    line = failure_line(output)
    assert re.search(r"POSTFLOWS_NEWSPAPER_TOKEN_URL, POSTFLOWS_NEWSPAPER_CLIENT_SECRET must be set", line)
    assert "CLIENT_ID" not in line


def test_every_newspaper_flow_is_deployed() -> None:
    names = {deployment.name for deployment in deployments()}
    assert {
        "newspaper-order",
        "newspaper-reports",
        "newspaper-master-data",
        "newspaper-statistics",
        "address-purchase",
        "structure-files",
    } <= names
