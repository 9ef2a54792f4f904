"""Every batch and query run opens with one ``GET /ping``: a wrong password or an unreachable service ends
the run in one line before anything is uploaded or asked (exit 2 when the credentials are refused, so the
settings must change; exit 1 otherwise)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.address_batch import address_batch
from postflows.cli import app
from tasks.address_service.ping import PingFailed
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
runner = CliRunner()

COMMANDS = {
    "address-batch": ["address-batch", str(EXAMPLE), "--max-wait", "60"],
    "address-query": ["address-query", str(EXAMPLE)],
}
REMOTE_WORK = ("/uploadfile", "/createfile", "/runbatch", "/runquery2")


def _sent_work(sandbox: Sandbox) -> int:
    return sum(sandbox.transport.count(path) for path in REMOTE_WORK)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_wrong_password_stops_after_one_ping_with_exit_2(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, command: str
) -> None:
    sandbox.config.address_password = "the-password-the-service-expects"
    result = runner.invoke(app, [*COMMANDS[command], "--out", str(tmp_path / "out")])

    assert result.exit_code == 2, result.output
    assert "did not answer its ping" in result.output and "Status 101" in result.output
    assert sandbox.transport.count("/ping") == 1 and _sent_work(sandbox) == 0


@pytest.mark.parametrize(
    ("rule", "exit_code"),
    [
        ({"kind": "http_status", "value": 401}, 2),
        ({"kind": "http_status", "value": 403}, 2),
        ({"kind": "service_status", "value": 102}, 2),
        ({"kind": "service_status", "value": 104}, 2),
        ({"kind": "service_status", "value": 105}, 1),
        ({"kind": "service_status", "value": 201}, 1),
        ({"kind": "http_status", "value": 404}, 1),
        ({"kind": "http_status", "value": 503}, 1),
    ],
    ids=lambda value: str(value.get("value")) if isinstance(value, dict) else str(value),
)
async def test_a_failed_ping_is_a_refusal_before_the_upload(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, rule: dict[str, object], exit_code: int
) -> None:
    sandbox.inject(api="address", endpoint="ping", times=None, **rule)
    with pytest.raises(PingFailed, match="did not answer its ping") as refused:
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", max_wait_s=60)

    assert refused.value.exit_code == exit_code  # what the command exits with (run_work reads it)
    assert sandbox.transport.count("/ping") >= 1 and _sent_work(sandbox) == 0


def test_a_failed_ping_ends_the_command_in_one_line(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    sandbox.inject(api="address", endpoint="ping", kind="http_status", value=503, times=None)
    result = runner.invoke(app, [*COMMANDS["address-batch"], "--out", str(tmp_path / "out")])

    assert result.exit_code == 1, result.output
    assert "did not answer its ping" in result.output.strip().splitlines()[-1]
    assert _sent_work(sandbox) == 0


def test_a_run_pings_once_before_its_work(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, [*COMMANDS["address-query"], "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert sandbox.transport.count("/ping") == 1 and sandbox.transport.count("/runquery2") > 0
