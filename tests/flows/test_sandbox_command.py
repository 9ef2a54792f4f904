"""Where the sandbox keeps its state: the embedded one and ``postflows sandbox`` in ``<data dir>/sandbox``
unless ``--state-dir`` or ``--memory`` says otherwise; which alignments it holds (``--alignment KEY=FILE``,
``POSTFLOWS_SANDBOX_ALIGNMENTS``); which statuses its orders go through (``--order-statuses``,
``POSTFLOWS_SANDBOX_ORDER_STATUSES``); what its /ping answers (``POSTFLOWS_SANDBOX_PING_ANSWER``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from postflows.cli import app
from runtime.settings import Settings
from runtime.wiring import ConfigurationError, reset_sandbox, sandbox_transport
from sandbox.inprocess import SandboxTransport, address_service_url

runner = CliRunner()


def served_config_state_dir(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, list[Path | None]]:
    served: list[Path | None] = []

    def run(application: FastAPI, **options: object) -> None:
        served.append(application.state.config.state_dir)

    monkeypatch.setattr("uvicorn.run", run)
    result = runner.invoke(app, ["sandbox", *args])
    return result.exit_code, served


def test_served_sandbox_keeps_state_in_the_data_dir_unless_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    assert served_config_state_dir(monkeypatch) == (0, [(data_dir / "sandbox").resolve()])
    assert served_config_state_dir(monkeypatch, "--state-dir", str(tmp_path / "elsewhere")) == (
        0,
        [tmp_path / "elsewhere"],
    )
    assert served_config_state_dir(monkeypatch, "--memory") == (0, [None])
    assert served_config_state_dir(monkeypatch, "--memory", "--state-dir", str(tmp_path)) == (2, [])


def test_embedded_sandbox_keeps_state_in_the_data_dir(tmp_path: Path) -> None:
    reset_sandbox()
    try:
        transport = sandbox_transport(Settings(data_dir=tmp_path / "data"))
        assert isinstance(transport, SandboxTransport)
        assert transport.config.state_dir == (tmp_path / "data" / "sandbox").resolve()
        assert (tmp_path / "data" / "sandbox" / "sandbox-state.db").is_file()
    finally:
        reset_sandbox()


ALIGNMENT = """\
upload:
  columns: [KDNR (QSTAT), Nachname, Strasse, Hausnummer, PLZ, Ort]
  record_id: KDNR (QSTAT)
  encoding: cp1252
result:
  record_id: KDNR
outputs:
  statistics_fr: "{###STATISTICFILE_FR###}"
"""


def served_alignments(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    served: list[dict[str, Any]] = []

    def run(application: FastAPI, **options: object) -> None:
        served.append(application.state.config.alignments)

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("uvicorn.run", run)
    result = runner.invoke(app, ["sandbox", "--memory", *args])
    return result.exit_code, served, result.output


def test_served_sandbox_holds_the_alignments_it_is_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first, second = tmp_path / "crm.yaml", tmp_path / "shop.yaml"
    first.write_text(ALIGNMENT, encoding="utf-8")
    second.write_text(ALIGNMENT.replace("KDNR (QSTAT)", "Nr"), encoding="utf-8")
    code, served, output = served_alignments(
        monkeypatch,
        "--alignment",
        f"crm_maintenance_v1={first}",
        "--alignment",
        f"shop_validation_v1={second}",
    )
    assert code == 0
    (alignments,) = served
    assert sorted(alignments) == ["crm_maintenance_v1", "shop_validation_v1"]
    assert alignments["crm_maintenance_v1"].result_record_id == "KDNR"
    assert alignments["shop_validation_v1"].upload.record_id == "Nr"
    assert (
        "alignment:       crm_maintenance_v1  (6 columns, id KDNR (QSTAT) -> KDNR, extra outputs: " in output
    )

    monkeypatch.setenv("POSTFLOWS_SANDBOX_ALIGNMENTS", f"crm_maintenance_v1={first}")
    assert list(served_alignments(monkeypatch)[1][0]) == ["crm_maintenance_v1"]
    assert served_alignments(monkeypatch, "--alignment", f"other_v1={second}")[1][0].keys() == {"other_v1"}


@pytest.mark.parametrize(
    ("pair", "reason"),
    [
        ("crm_maintenance_v1", "alignment 'crm_maintenance_v1': expected KEY=FILE"),
        ("crm_maintenance_v1={missing}", "cannot be read as YAML"),
        ("crm_maintenance_v1={broken}", "upload.record_id: Field required"),
    ],
)
def test_served_sandbox_refuses_an_unusable_alignment_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pair: str, reason: str
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("upload:\n  columns: [A, B]\n", encoding="utf-8")
    argument = pair.format(missing=tmp_path / "missing.yaml", broken=broken)
    code, served, output = served_alignments(monkeypatch, "--alignment", argument)
    assert (code, served) == (2, [])
    assert reason in output
    assert len(output.strip().splitlines()) == 1


def test_embedded_sandbox_holds_the_alignments_of_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "crm.yaml"
    path.write_text(ALIGNMENT, encoding="utf-8")
    reset_sandbox()
    try:
        settings = Settings(data_dir=tmp_path / "data", sandbox_alignments=f"crm_maintenance_v1={path}")
        transport = sandbox_transport(settings)
        assert isinstance(transport, SandboxTransport)
        assert transport.config.alignments["crm_maintenance_v1"].result_record_id == "KDNR"
        with pytest.raises(
            ConfigurationError, match="POSTFLOWS_SANDBOX_ALIGNMENTS: alignment 'crm_v1': expected KEY=FILE"
        ):
            sandbox_transport(Settings(data_dir=tmp_path / "data", sandbox_alignments="crm_v1"))
    finally:
        reset_sandbox()


CONTROL_TOKEN = "served-control-token-81d2"


def served_app(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[FastAPI, str]:
    served: list[FastAPI] = []

    def run(application: FastAPI, **options: object) -> None:
        served.append(application)

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("uvicorn.run", run)
    result = runner.invoke(app, ["sandbox", "--memory", *args])
    assert result.exit_code == 0, result.output
    return served[0], result.output


async def _control_status(application: FastAPI, **headers: str) -> int:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application), base_url="http://sandbox", headers=headers
    ) as http:
        return (await http.get("/_sandbox/requests")).status_code


async def test_served_sandbox_opens_its_control_endpoints_on_loopback_or_with_the_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loopback, output = served_app(monkeypatch)
    assert await _control_status(loopback) == 200
    assert "/_sandbox/faults  (loopback only)" in output

    everywhere, output = served_app(monkeypatch, "--host", "0.0.0.0")
    assert await _control_status(everywhere) == 403
    assert "refused: not on loopback and POSTFLOWS_SANDBOX_CONTROL_TOKEN is not set" in output

    monkeypatch.setenv("POSTFLOWS_SANDBOX_CONTROL_TOKEN", CONTROL_TOKEN)
    guarded, output = served_app(monkeypatch, "--host", "0.0.0.0")
    assert await _control_status(guarded) == 403
    assert await _control_status(guarded, **{"X-Sandbox-Control-Token": CONTROL_TOKEN}) == 200
    assert await _control_status(guarded, **{"X-Sandbox-Control-Token": "guessed"}) == 403
    assert "with the X-Sandbox-Control-Token header from POSTFLOWS_SANDBOX_CONTROL_TOKEN" in output
    assert CONTROL_TOKEN not in output


def served_order_statuses(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, list[Any], str]:
    served: list[Any] = []

    def run(application: FastAPI, **options: object) -> None:
        served.append(application.state.config.order_statuses)

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("uvicorn.run", run)
    result = runner.invoke(app, ["sandbox", "--memory", *args])
    return result.exit_code, served, result.output


def test_sandbox_orders_stay_loaded_unless_a_sequence_is_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    code, served, output = served_order_statuses(monkeypatch)
    assert (code, served) == (0, [("LOADED",)]) and "order statuses:  LOADED" in output
    monkeypatch.setenv("POSTFLOWS_SANDBOX_ORDER_STATUSES", "LOADED,CONTROL,DONE")
    assert served_order_statuses(monkeypatch)[1] == [("LOADED", "CONTROL", "DONE")]
    assert served_order_statuses(monkeypatch, "--order-statuses", "control")[1] == [("CONTROL",)]
    code, served, output = served_order_statuses(monkeypatch, "--order-statuses", "LOADED,,DONE")
    assert (code, served) == (2, []) and "expected status names separated by commas" in output

    monkeypatch.delenv("POSTFLOWS_SANDBOX_ORDER_STATUSES")
    reset_sandbox()
    try:
        transport = sandbox_transport(Settings(data_dir=tmp_path / "data"))
        assert isinstance(transport, SandboxTransport)
        assert transport.config.order_statuses == ("LOADED",)
        settings = Settings(data_dir=tmp_path / "data", sandbox_order_statuses="LOADED,DONE")
        transport = sandbox_transport(settings)
        assert isinstance(transport, SandboxTransport)
        assert transport.config.order_statuses == ("LOADED", "DONE")
        with pytest.raises(ConfigurationError, match="POSTFLOWS_SANDBOX_ORDER_STATUSES: 'LOADED;DONE'"):
            sandbox_transport(Settings(data_dir=tmp_path / "data", sandbox_order_statuses="LOADED;DONE"))
    finally:
        reset_sandbox()


def test_the_sandbox_answers_ping_as_the_setting_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``POSTFLOWS_SANDBOX_PING_ANSWER`` reaches both the embedded and the served sandbox's /ping."""
    served: list[str] = []

    def run(application: FastAPI, **options: object) -> None:
        served.append(application.state.config.address_ping_answer)

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr("uvicorn.run", run)
    monkeypatch.setenv("POSTFLOWS_SANDBOX_PING_ANSWER", "empty-text")
    result = runner.invoke(app, ["sandbox", "--memory"])
    assert (result.exit_code, served) == (0, ["empty-text"])
    assert "address ping:    HTTP 200, empty text body" in result.output
    reset_sandbox()
    try:
        for answer, content_type in (("empty-json", "application/json"), ("empty-text", "text/plain")):
            transport = sandbox_transport(Settings(data_dir=tmp_path / "data", sandbox_ping_answer=answer))
            assert isinstance(transport, SandboxTransport)
            response = _ping(transport)
            assert response.status_code == 200 and response.content == b""
            assert response.headers["content-type"].startswith(content_type)
        monkeypatch.delenv("POSTFLOWS_SANDBOX_PING_ANSWER")
        response = _ping(sandbox_transport(Settings(data_dir=tmp_path / "data")))
        assert response.json() == {"Status": 0}
    finally:
        reset_sandbox()


def _ping(transport: httpx.AsyncBaseTransport) -> httpx.Response:
    async def ping() -> httpx.Response:
        async with httpx.AsyncClient(
            transport=transport, auth=("sandbox-user", "sandbox-password")
        ) as client:
            return await client.get(f"{address_service_url()}/ping")

    return asyncio.run(ping())
