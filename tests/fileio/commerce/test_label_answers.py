"""The label in an address-label answer whose shape the spec does not show: a PDF answer is the label; a JSON
answer is kept as received and its label taken as base64 from the configured field; whatever is missing or
wrong is said, never a crash. And the answers kept for resumed runs."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from connectors.commerce import ReceivedAnswer
from fileio.commerce.kept_answers import KeptAnswers
from fileio.commerce.label_answers import label_content, label_id_of, value_at, write_label_files

PDF = b"%PDF-1.4\n% a label\n%%EOF\n"
SETTING = "POSTFLOWS_COMMERCE_LABEL_PDF_FIELD"


def json_answer(body: object) -> ReceivedAnswer:
    return ReceivedAnswer(json.dumps(body).encode(), "application/json; charset=utf-8")


def b64(content: bytes) -> str:
    return base64.b64encode(content).decode()


def read(answer: ReceivedAnswer, field: str = "item.label") -> object:
    return label_content(answer, pdf_field=field, setting=SETTING)


def test_a_pdf_answer_is_the_label() -> None:
    content = label_content(ReceivedAnswer(PDF, "application/pdf"), pdf_field="item.label", setting=SETTING)
    assert (content.received, content.pdfs, content.problem) == (None, (PDF,), "")


def test_the_label_of_a_json_answer_is_taken_from_the_field_a_string_or_each_of_an_array() -> None:
    answer = json_answer({"item": {"identCode": "99.60.1", "label": [b64(PDF), b64(PDF + b"2")]}})
    content = label_content(answer, pdf_field="item.label", setting=SETTING)
    assert content.pdfs == (PDF, PDF + b"2") and content.label_id == "99.60.1" and not content.problem
    assert content.received == (answer.content, "json")
    single = label_content(
        json_answer({"doc": {"pdf": b64(PDF)}, "id": 7}), pdf_field="doc.pdf", setting=SETTING
    )
    assert single.pdfs == (PDF,) and single.label_id == ""  # a number is not taken for a label id


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"item": {}}, f"the answer has no label at item.label ({SETTING} names where it is)"),
        ({"item": {"label": "***"}}, "the answer's item.label is not valid base64"),
        ({"item": {"label": b64(b"GIF89a")}}, "the label at item.label is not a PDF"),
        ({"item": {"label": [b64(PDF), 5]}}, "the answer's item.label[1] is not base64 text"),
        ({"item": {"label": []}}, "the answer's item.label is empty"),
    ],
)
def test_a_json_answer_without_a_pdf_says_why_and_is_kept(body: object, problem: str) -> None:
    answer = json_answer(body)
    content = label_content(answer, pdf_field="item.label", setting=SETTING)
    assert content.pdfs == () and content.problem == problem
    assert content.received == (answer.content, "json")


def test_an_answer_neither_json_nor_pdf_is_kept_as_received() -> None:
    content = label_content(ReceivedAnswer(b"<html>ok</html>", "text/html"), pdf_field="x", setting=SETTING)
    assert content.received == (b"<html>ok</html>", "bin")
    assert content.problem == "the answer is neither JSON nor a PDF (text/html); kept as received"
    fake = label_content(ReceivedAnswer(b"not a pdf", "application/pdf"), pdf_field="x", setting=SETTING)
    assert fake.pdfs == () and fake.problem == "the PDF answer is not a PDF"


def test_a_dotted_path_indexes_arrays_with_numbers() -> None:
    body = {"items": [{"label": "a"}, {"label": "b"}]}
    assert value_at(body, "items.1.label") == "b"
    assert value_at(body, "items.2.label") is None and value_at(body, "items.x") is None


def test_the_label_id_is_the_ident_code_else_an_id() -> None:
    assert label_id_of(json_answer({"id": "L-1", "item": {"identCode": "99.60.7"}})) == "99.60.7"
    assert label_id_of(json_answer({"id": "L-1"})) == "L-1"
    assert label_id_of(json_answer({"id": ""})) is None
    assert label_id_of(ReceivedAnswer(PDF, "application/pdf")) is None


def test_the_files_of_a_label(tmp_path: Path) -> None:
    answer = json_answer({"item": {"label": [b64(PDF), b64(PDF)]}})
    content = label_content(answer, pdf_field="item.label", setting=SETTING)
    answer_path, pdfs = write_label_files(tmp_path, "label-3", content)
    assert answer_path == tmp_path / "label-3.json" and answer_path.read_bytes() == answer.content
    assert [path.name for path in pdfs] == ["label-3.pdf", "label-3-2.pdf"]
    assert all(path.read_bytes() == PDF for path in pdfs)


def test_a_kept_answer_is_given_back_only_as_it_was_kept(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "answers")
    record, answer = kept.keep("address-label:0a1b", ReceivedAnswer(PDF, "application/pdf"))
    assert answer == ReceivedAnswer(PDF, "application/pdf")
    assert kept.path("address-label:0a1b").name == "address-label-0a1b.answer"
    assert kept.load("address-label:0a1b", record) == ReceivedAnswer(PDF, "application/pdf")
    assert kept.load("address-label:ffff", record) is None
    kept.path("address-label:0a1b").write_bytes(b"changed")
    assert kept.load("address-label:0a1b", record) is None
    # Kept, but the run ended before it recorded the answer: the file is taken as it is.
    assert kept.load("address-label:0a1b", None) == ReceivedAnswer(b"changed")
    assert kept.load("address-label:ffff", None) is None
