"""§2.1's minimum input follows the key a run sends under: a verification key (``<service>_validation_v1``)
needs name, first name, street and house number in a batch and in a query alike, so a P.O. box address is
rejected before anything is sent; a maintenance key takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fileio.address_service.records import minimum_input_mode
from flows.address_batch import address_batch
from flows.address_query import address_query
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

ROWS = """KundenNr;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort;Postfach;PostfachPLZ;PostfachOrt
1;Hans;Muster;Lindenstrasse;12;6010;Kriens;;;
2;Anna;Muster;;;;;Postfach 12;6002;Luzern
"""


@pytest.mark.parametrize(
    ("kind", "key", "mode"),
    [
        ("batch", "postflows_maintenance_v1", "batch"),
        ("batch", "postflows_validation_v1", "verification"),
        ("query", "Verlag_Validation_V1 ", "verification"),
        ("query", "postflows_maintenance_v1", "query"),
        ("query", None, "query"),
    ],
)
def test_the_key_names_the_rule(kind: str, key: str | None, mode: str) -> None:
    assert minimum_input_mode(kind, key) == mode  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "rejected"), [("postflows_maintenance_v1", 0), ("postflows_validation_v1", 1)]
)
async def test_a_batch_under_a_verification_key_rejects_a_po_box_address(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, rejected: int
) -> None:
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_BATCH_KEY", key)
    source = tmp_path / "addresses.csv"
    source.write_text(ROWS, encoding="utf-8")
    summary = await call(address_batch, input_path=source, output_dir=tmp_path / "out", dry_run=True)

    assert (summary.accepted_rows, summary.rejected_rows) == (2 - rejected, rejected)
    if rejected:
        problems = read_output_csv(tmp_path / "out" / "rejected.csv", dtype=str)
        assert problems["KundenNr"].tolist() == ["2"]
        assert "Streetname missing" in problems.loc[0, "problems"]
    assert sum(sandbox.transport.calls.values()) == 0


async def test_queries_under_a_verification_key_reject_a_po_box_address(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_QUERY_KEY", "postflows_validation_v1")
    source = tmp_path / "addresses.csv"
    source.write_text(ROWS, encoding="utf-8")
    summary = await call(address_query, input_path=source, output_dir=tmp_path / "out")

    assert (summary.accepted_rows, summary.rejected_rows) == (1, 1)
    assert sandbox.transport.count("/runquery2") == 1


async def test_a_po_box_row_under_a_maintenance_key_is_sent_and_read_back_from_the_answer(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The maintenance rule takes a P.O. box address; the row goes to the service and its answer comes back
    on the same row: the P.O. box fields as uploaded and the service's status for it."""
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_BATCH_KEY", "postflows_maintenance_v1")
    source = tmp_path / "addresses.csv"
    source.write_text(ROWS, encoding="utf-8")
    summary = await call(address_batch, input_path=source, output_dir=tmp_path / "out", max_wait_s=60)

    assert (summary.accepted_rows, summary.rejected_rows, summary.result_rows) == (2, 0, 2)
    results = read_output_csv(tmp_path / "out" / "results.csv", dtype=str).fillna("")
    box = results.set_index("KundenNr").loc["2"]
    # The row as the file gives it, each column beside the service's value, and what it answered.
    assert (box["Postfach"], box["PostfachPLZ"], box["PostfachOrt"]) == ("Postfach 12", "6002", "Luzern")
    assert {"Postfach (Post)", "PostfachPLZ (Post)", "PostfachOrt (Post)"} <= set(results.columns)
    assert (box["Strasse"], box["Hausnummer"], box["PLZ"]) == ("", "", "")
    assert box["ReturnedByService"] == "True" and box["QSTAT"] != "" and box["QSTAT_Designation"] != ""
    assert len(box["ShortReport"].removeprefix("'")) == 24 and box["SR19_PoBoxZIP"] != ""  # guarded: "--…"
    assert results.set_index("KundenNr").loc["1", "Strasse"] == "Lindenstrasse"
