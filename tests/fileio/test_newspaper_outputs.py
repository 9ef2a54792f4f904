"""Output helpers of the newspaper pipelines: raw bodies kept, black list entries found, files named."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx

from connectors.newspaper import Document, OrderStatus, PurchaseDocumentKind, PurchaseProgress, RawResponse
from fileio.newspaper.outputs import item_lists, records_frame, summary_markdown, write_json
from tasks.newspaper.masterdata import black_list_entries
from tasks.newspaper.purchases import document_kinds, overall_percent
from tasks.newspaper.structure_files import file_stem


def test_raw_response_written_byte_for_byte(tmp_path: Path) -> None:
    content = b'{"b": 1,  "a": [1, 2], "unknown": {"kept": true}}'
    request = httpx.Request("GET", "https://x.invalid/sendings")
    raw = RawResponse.from_response(
        httpx.Response(200, content=content, headers={"content-type": "application/json"}, request=request)
    )
    assert write_json(tmp_path, "sendings", raw).read_bytes() == content


def test_model_written_with_unknown_fields(tmp_path: Path) -> None:
    status = OrderStatus.model_validate(
        {"statusValue": "RELEASED", "statusDate": "2025-03-04T10:15:00+01:00", "x": 1}
    )
    written = json.loads(write_json(tmp_path, "status", status).read_text())
    assert written == {"statusValue": "RELEASED", "statusDate": "2025-03-04T10:15:00+01:00", "x": 1}


def test_black_list_entries_in_any_shape() -> None:
    assert black_list_entries({"n": 1, "blackListDetails": [{"a": 1}, {"a": 2}]}) == [{"a": 1}, {"a": 2}]
    assert black_list_entries([{"a": 1}]) == [{"a": 1}]
    assert black_list_entries({"single": "entry"}) == [{"single": "entry"}]
    assert black_list_entries(None) == []


def test_item_lists_and_frames() -> None:
    rows = item_lists({"nationalItems": [{"count": 3}], "internationalItems": [], "note": "x"})
    assert rows == [{"group": "nationalItems", "count": 3}]
    frame = records_frame([{"a": 1, "nested": {"b": 2}}], ("nested",))
    assert frame.columns.tolist() == ["nested", "a"] and frame.loc[0, "nested"] == '{"b":2}'


def test_summary_lists_warnings() -> None:
    text = summary_markdown("T", {"a|b": 1}, ["0900 late"], ["note"])
    assert "| a\\|b | 1 |" in text and "- 0900 late" in text and "## Notes" in text
    assert "_none_" in summary_markdown("T", {}, [])


def test_structure_file_stem() -> None:
    data = base64.b64encode(b"x").decode()
    assert (
        file_stem(Document.model_validate({"data": data, "fileName": "AZ_GZA_v1.zip"}), 1, 1) == "AZ_GZA_v1"
    )
    assert file_stem(Document.model_validate({"data": data, "fileName": "../../evil.zip"}), 1, 1) == "evil"
    assert file_stem(Document.model_validate({"data": data}), 9, 2) == "structure-file-9-2"


def test_purchase_documents_and_progress() -> None:
    assert PurchaseDocumentKind.NON_REUSABLE_ADDRESSES not in document_kinds(False)
    assert len(document_kinds(True)) == 7
    assert (
        overall_percent(
            PurchaseProgress.model_validate(
                {"validationStatus": "IN_PROGRESS", "validationProgressPercent": 40}
            )
        )
        == 20
    )
    ready = {"validationStatus": "READY", "validationProgressPercent": 100, "sortingStatus": "READY"}
    assert overall_percent(PurchaseProgress.model_validate(ready)) == 100
