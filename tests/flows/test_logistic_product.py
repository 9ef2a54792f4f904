"""The logistic product flow against the commerce sandbox: the answer as received, its mandatory services,
the names of its codes from the stored reference data, the run in the history; a product the service does
not know (404) and an answer that cannot be read fail the run naming the cause."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

import history
from connectors.errors import MalformedResponse, NotFound
from flows.delivery_reference_sync import delivery_reference_sync
from flows.logistic_product import logistic_product
from runtime.settings import get_settings
from sandbox.commerce.delivery_options import PRODUCTS
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

HOW = "/deliverabilities/how/"


def _runs() -> list[history.Run]:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        return [run for run in history.list_runs(session, limit=10) if run.flow == "logistic-product"]


async def test_the_product_as_received_with_its_mandatory_services_and_files(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = await call(logistic_product, product_code=" SD2 ", output_dir=out)

    assert summary.answer == PRODUCTS["SD2"]
    assert (summary.product_code, summary.barcode, summary.mandatory_services) == (
        "SD2",
        "99.22",
        ["SI"],
    )
    assert (summary.delivery_instructions, summary.additional_services) == (1, 2)
    assert summary.names == {"additionalServices": {}, "deliveryInstructions": {}}  # no sync ran yet
    assert json.loads((out / "product.json").read_text(encoding="utf-8")) == PRODUCTS["SD2"]
    report = (out / "summary.md").read_text(encoding="utf-8")
    assert "| mandatory additional services | SI |" in report and "| SI | yes |" in report
    assert "postflows delivery-sync" in report
    assert summary.files == [str((out / "product.json").resolve()), str((out / "summary.md").resolve())]
    assert "answer" not in _stored_summary(summary.run_id)
    [run] = _runs()
    assert run.state == "COMPLETED" and run.parameters["product_code"] == "SD2"
    assert sandbox.transport.count(f"{HOW}SD2") == 1


def _stored_summary(run_id: int) -> dict[str, object]:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        run = history.get_run(session, run_id)
        assert run is not None and run.summary is not None
        return dict(run.summary)


async def test_the_names_come_from_the_stored_reference_data(sandbox: Sandbox, flow_env: Path) -> None:
    await call(delivery_reference_sync)
    summary = await call(logistic_product, product_code="PRI")

    names = summary.names
    assert names["additionalServices"]["SI"] and names["deliveryInstructions"]["ZAW3218"]
    assert set(names["additionalServices"]) >= {
        item["code"] for item in PRODUCTS["PRI"]["additionalServices"]
    }
    assert summary.files == []  # no output folder: nothing written


async def test_an_unknown_product_fails_the_run_saying_so(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    with pytest.raises(NotFound, match=r"no such product 'XYZ' \(the service answered HTTP 404\)"):
        await call(logistic_product, product_code="XYZ", output_dir=tmp_path / "out")

    [run] = _runs()
    assert run.state == "FAILED" and "no such product 'XYZ'" in (run.error or "")
    assert not (tmp_path / "out" / "product.json").exists()


async def test_an_answer_that_cannot_be_read_fails_the_run_naming_the_field(
    sandbox: Sandbox, flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = sandbox.transport

    class Garbling(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await inner.handle_async_request(request)
            if HOW in request.url.path:
                await response.aread()
                return httpx.Response(200, json={"barcode": "99.40", "additionalServices": "SI"})
            return response

    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: Garbling())
    with pytest.raises(MalformedResponse, match="logistic product cannot be read: productCode"):
        await call(logistic_product, product_code="PRI")
    [run] = _runs()
    assert run.state == "FAILED" and "MalformedResponse" in (run.error or "")


def test_a_product_code_is_one_word() -> None:
    from pydantic import ValidationError

    from flows.requests import LogisticProductRequest

    assert LogisticProductRequest(product_code=" PRI ").product_code == "PRI"
    for code in ("", "P RI", "X" * 51):
        with pytest.raises(ValidationError, match="a product code is one word"):
            LogisticProductRequest(product_code=code)
