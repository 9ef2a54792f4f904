"""Address labels against the commerce sandbox: each request of a JSON file posted once, the labels written as
PDF files with each answer as received and an index; a re-run resumes without posting (one POST per body
across the runs), a lost answer is uncertain until --resubmit, a PDF answer is the label itself, and an
answer without a label says so."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from typer.testing import CliRunner

from flows.address_labels import address_labels
from postflows.cli import app
from runtime.wiring import embedded
from tasks.commerce.address_labels import LabelsWithoutPdf
from tasks.commerce.json_submissions import SubmissionsUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-labels.json"
LABELS = "/barcode/v1/addresslabels"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def index(directory: Path) -> pd.DataFrame:
    return read_output_csv(directory / "labels.csv", dtype=str, keep_default_na=False)


async def test_labels_are_created_once_and_a_rerun_reuses_their_kept_answers(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    first = await call(address_labels, EXAMPLE, tmp_path / "first")
    assert first.statuses == {"created": 2, "resumed": 0, "uncertain": 0, "refused": 0, "no pdf": 0}
    assert sandbox.transport.count(LABELS) == 2
    made = index(tmp_path / "first")
    assert made[["position", "line", "pdf", "answer", "status"]].values.tolist() == [
        ["1", "2", "label-1.pdf", "label-1.json", "created"],
        ["2", "13", "label-2.pdf", "label-2.json", "created"],
    ]
    assert made["labelId"].str.fullmatch(r"99\.60\.\d{12}").all() and made["key"].nunique() == 2
    pdf = (tmp_path / "first" / "label-1.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and made.loc[0, "labelId"].encode() in pdf
    answer = json.loads((tmp_path / "first" / "label-1.json").read_bytes())
    assert base64.b64decode(answer["item"]["label"][0]) == pdf  # as received

    again = await call(address_labels, EXAMPLE, tmp_path / "again")
    assert sandbox.transport.count(LABELS) == 2  # one POST per body across both runs
    assert again.statuses["resumed"] == 2 and again.resumed is True
    resumed = index(tmp_path / "again")
    assert resumed["labelId"].tolist() == made["labelId"].tolist()
    assert resumed["message"].str.startswith("created by run").all()
    for name in ("label-1.pdf", "label-2.pdf", "label-1.json"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "first" / name).read_bytes()


async def test_a_resumed_label_whose_kept_answer_is_gone_says_so_and_is_not_requested_again(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    await call(address_labels, EXAMPLE, tmp_path / "first")
    for kept in (flow_env / "answers" / "address-label").iterdir():
        kept.unlink()
    summary = await call(address_labels, EXAMPLE, tmp_path / "again")
    assert sandbox.transport.count(LABELS) == 2
    assert summary.statuses["no pdf"] == 2
    gone = index(tmp_path / "again").iloc[0]
    assert (gone["status"], gone["pdf"]) == ("no pdf", "")
    assert gone["message"].startswith("created by run") and "is no longer kept in" in gone["message"]


async def test_two_identical_requests_are_two_labels(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    body = {"item": {"recipient": {"name1": "Hans Muster"}}}
    path = tmp_path / "twice.jsonl"
    path.write_text(f"{json.dumps(body)}\n{json.dumps(body)}\n", encoding="utf-8")
    summary = await call(address_labels, path, tmp_path / "out")
    assert summary.statuses["created"] == 2 and sandbox.transport.count(LABELS) == 2
    assert index(tmp_path / "out")["labelId"].nunique() == 2


def test_a_lost_answer_is_uncertain_until_resubmit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(
        api="commerce", endpoint="*barcode/v1/addresslabels", method="POST", kind="lost_answer", after=1
    )
    out = str(tmp_path / "out")

    code, output = invoke("address-labels", str(EXAMPLE), "--out", out, "--concurrency", "1")
    assert code == 1, output
    assert "1 address label(s) may have been created although no answer arrived (positions 2;" in output
    assert "--resubmit" in output
    assert index(tmp_path / "out")["status"].tolist() == ["created", "uncertain"]
    assert sandbox.transport.count(LABELS) == 2

    code, output = invoke("address-labels", str(EXAMPLE), "--out", out)
    assert code == 2 and "--resubmit" in output  # stopped by an earlier run's uncertain request
    assert sandbox.transport.count(LABELS) == 2  # the uncertain one is not sent again on its own
    assert index(tmp_path / "out")["status"].tolist() == ["resumed", "uncertain"]

    code, output = invoke("address-labels", str(EXAMPLE), "--out", out, "--resubmit")
    assert code == 0, output
    assert sandbox.transport.count(LABELS) == 3
    final = index(tmp_path / "out")
    assert final["status"].tolist() == ["resumed", "created"] and final.loc[1, "pdf"] == "label-2.pdf"


class PdfLabels(httpx.AsyncBaseTransport):
    """The sandbox, but a label is answered as the PDF itself (``application/pdf``)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if not request.url.path.endswith(LABELS) or response.status_code != 200:
            return response
        label: dict[str, Any] = json.loads(await response.aread())
        pdf = base64.b64decode(label["item"]["label"][0])
        return httpx.Response(200, content=pdf, headers={"Content-Type": "application/pdf"}, request=request)


async def test_a_pdf_answer_is_the_label(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "runtime.wiring.embedded.sandbox_transport", lambda settings: PdfLabels(sandbox.transport)
    )
    summary = await call(address_labels, EXAMPLE, tmp_path / "out")
    assert summary.statuses["created"] == 2
    made = index(tmp_path / "out")
    assert made[["labelId", "pdf", "answer"]].values.tolist() == [
        ["", "label-1.pdf", ""],
        ["", "label-2.pdf", ""],
    ]
    assert (tmp_path / "out" / "label-1.pdf").read_bytes().startswith(b"%PDF-")
    assert not list((tmp_path / "out").glob("*.json"))
    kept = {path.stat().st_ino for path in (flow_env / "answers" / "address-label").iterdir()}
    assert kept == {
        (tmp_path / "out" / f"label-{n}.pdf").stat().st_ino for n in (1, 2)
    }  # the label is the answer


async def test_an_answer_without_a_label_at_the_field_is_no_pdf_and_kept(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guess commerce.label-answer does not hold: the run fails naming the setting (never green without
    its PDFs), the answers are kept, and the same command with the right setting writes the PDFs without a
    second label request."""
    monkeypatch.setenv("POSTFLOWS_COMMERCE_LABEL_PDF_FIELD", "label.pdf")
    with pytest.raises(LabelsWithoutPdf, match="POSTFLOWS_COMMERCE_LABEL_PDF_FIELD"):
        await call(address_labels, EXAMPLE, tmp_path / "out")
    made = index(tmp_path / "out")
    assert made["pdf"].tolist() == ["", ""] and made["answer"].tolist() == ["label-1.json", "label-2.json"]
    assert made.loc[0, "message"] == (
        "the answer has no label at label.pdf (POSTFLOWS_COMMERCE_LABEL_PDF_FIELD names where it is)"
    )
    assert "| 2 | 13 | no pdf |" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    monkeypatch.delenv("POSTFLOWS_COMMERCE_LABEL_PDF_FIELD")
    again = await call(address_labels, EXAMPLE, tmp_path / "again")
    assert again.statuses["resumed"] == 2 and sandbox.transport.count(LABELS) == 2
    assert (tmp_path / "again" / "label-1.pdf").read_bytes().startswith(b"%PDF-")


def test_a_400_is_uncertain_and_the_next_run_stops_with_exit_2_naming_resubmit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # §7 shows no row for labels: a 400 does not prove that no label was made (here the service made it).
    monkeypatch.setenv("COLUMNS", "200")
    sandbox.inject(
        api="commerce",
        endpoint="*barcode/v1/addresslabels",
        method="POST",
        kind="processed_status",
        value=400,
        times=1,
    )
    out = str(tmp_path / "out")
    code, output = invoke("address-labels", str(EXAMPLE), "--out", out, "--concurrency", "1")
    assert code == 1 and "address label 1: the request (commerce: HTTP 400" in output, output
    assert index(tmp_path / "out")["status"].tolist() == ["uncertain", "created"]

    code, output = invoke("address-labels", str(EXAMPLE), "--out", out)
    assert code == 2 and "--resubmit" in output, output
    assert sandbox.transport.count(LABELS) == 2  # one POST per request in all


def test_a_path_the_service_does_not_have_fails_naming_the_setting_and_the_right_one_sends_them(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("POSTFLOWS_COMMERCE_BARCODE_PATH", "/barcode/v1/labels")
    out = str(tmp_path / "out")
    code, output = invoke("address-labels", str(EXAMPLE), "--out", out)
    assert code == 1, output
    (failed,) = [line for line in output.splitlines() if line.startswith("failed:")]
    assert "HTTP 404" in failed and "set POSTFLOWS_COMMERCE_BARCODE_PATH to the service's path" in failed
    assert sandbox.transport.count("/barcode/v1/labels") == 2 and sandbox.transport.count(LABELS) == 0

    monkeypatch.delenv("POSTFLOWS_COMMERCE_BARCODE_PATH")
    code, output = invoke("address-labels", str(EXAMPLE), "--out", out)
    assert code == 0, output  # not processed: nothing waits for --resubmit
    assert index(tmp_path / "out")["status"].tolist() == ["created", "created"]
    assert sandbox.transport.count(LABELS) == 2


def test_a_file_that_is_not_json_is_refused_before_anything_is_sent(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "labels.json"
    path.write_text('[{"item": 1},\n "x"]', encoding="utf-8")
    code, output = invoke("address-labels", str(path), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "line 2, column 2: address label request 2 must be a JSON object, not a string" in output
    assert sandbox.transport.count(LABELS) == 0


async def test_an_uncertain_label_fails_the_run_naming_why_its_answer_never_came(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(api="commerce", endpoint="*barcode/v1/addresslabels", kind="http_status", value=503)
    with pytest.raises(
        SubmissionsUncertain,
        match=r"address label 1: the request \(commerce: HTTP 503 .*\) got no answer that proves it was not",
    ):
        await call(address_labels, EXAMPLE, tmp_path / "out", concurrency=1)
    assert sandbox.transport.count(LABELS) == 2  # a 5xx to a POST is never sent again on its own
    assert index(tmp_path / "out")["status"].tolist() == ["uncertain", "created"]


def test_a_refused_token_sends_nothing_and_the_next_run_creates_every_label_without_resubmit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = str(tmp_path / "out")
    with monkeypatch.context() as wrong:
        served = embedded.sandbox_service
        wrong.setattr(
            embedded,
            "sandbox_service",
            lambda api, needed_by: {**served(api, needed_by), "secret": "not-the-secret"},
        )
        code, output = invoke("address-labels", str(EXAMPLE), "--out", out)
    assert code == 1 and "token request" in output and "refused: HTTP 401" in output, output
    assert sandbox.transport.count(LABELS) == 0
    code, output = invoke("address-labels", str(EXAMPLE), "--out", out)
    assert code == 0, output  # nothing was sent, so nothing waits for --resubmit
    assert index(tmp_path / "out")["status"].tolist() == ["created", "created"]
    assert sandbox.transport.count(LABELS) == 2


def test_a_body_with_nan_is_refused_when_read_naming_its_line(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "labels.json"
    path.write_text('[{"item": 1},\n {"item": {"weight": NaN}}]', encoding="utf-8")
    code, output = invoke("address-labels", str(path), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "line 2, column 22: not usable JSON (NaN is not a JSON number)" in output, output
    assert sandbox.transport.count(LABELS) == 0


def test_the_run_after_an_uncertain_label_exits_2_even_when_its_own_new_request_is_lost_too(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    lost = {
        "api": "commerce",
        "endpoint": "*barcode/v1/addresslabels",
        "method": "POST",
        "kind": "lost_answer",
    }
    sandbox.inject(**lost, times=1)
    out = str(tmp_path / "out")
    code, output = invoke("address-labels", str(EXAMPLE), "--out", out, "--concurrency", "1")
    assert code == 1, output  # this run's own request lost its answer
    assert index(tmp_path / "out")["status"].tolist() == ["uncertain", "created"]

    bodies = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    third = {**bodies[1], "item": {**bodies[1]["item"], "itemID": "ORDER-1003"}}
    more = tmp_path / "more.json"
    more.write_text(json.dumps([*bodies, third]), encoding="utf-8")
    sandbox.inject(**lost, times=1)
    code, output = invoke("address-labels", str(more), "--out", out, "--concurrency", "1")
    assert code == 2 and "--resubmit" in output, output
    assert index(tmp_path / "out")["status"].tolist() == ["uncertain", "resumed", "uncertain"]
    assert sandbox.transport.count(LABELS) == 3  # the earlier uncertain one was not sent again


async def test_each_answer_is_on_disk_once_the_kept_one_is_the_output_file(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    await call(address_labels, EXAMPLE, tmp_path / "out")
    kept = sorted((flow_env / "answers" / "address-label").iterdir())
    answers = [tmp_path / "out" / name for name in ("label-1.json", "label-2.json")]
    assert len(kept) == 2 and all(path.suffix == ".answer" for path in kept)
    assert {path.stat().st_ino for path in kept} == {path.stat().st_ino for path in answers}
    assert all(path.stat().st_nlink == 2 for path in answers)


def test_an_answer_over_the_response_limit_is_refused_naming_the_setting_and_uncertain(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sandbox's label answers are about 1 KB, its token answer far less.
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("POSTFLOWS_RESPONSE_MAX_BYTES", "600")
    out = str(tmp_path / "out")
    code, output = invoke("address-labels", str(EXAMPLE), "--out", out, "--concurrency", "1")
    assert code == 1, output
    assert "larger than the limit of 600 bytes (POSTFLOWS_RESPONSE_MAX_BYTES)" in output
    assert index(tmp_path / "out")["status"].tolist() == ["uncertain", "uncertain"]
    assert not list((tmp_path / "out").glob("label-*")) and not (flow_env / "answers").exists()
    code, output = invoke("address-labels", str(EXAMPLE), "--out", out)
    assert code == 2 and "--resubmit" in output, output
    assert sandbox.transport.count(LABELS) == 2  # sent once each: the label may exist
