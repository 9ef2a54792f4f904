"""Saving what the newspaper API sends: safe distinct names, base64 and size checked before writing, the
answer as received kept, never dropped; the structure file, delivery note and purchase document tasks."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from connectors.errors import NotFound
from connectors.newspaper import (
    ApiResult,
    Document,
    DocumentSet,
    DocumentSizeMismatch,
    PurchaseDocumentKind,
    RawResponse,
    StructureFileCode,
)
from connectors.newspaper.documents import document_set_from_response
from fileio.documents import (
    MAX_STEM_BYTES,
    DocumentLimits,
    DocumentNaming,
    DocumentRejected,
    FileNames,
    safe_stem,
    save_documents,
)
from fileio.newspaper.outputs import write_json
from tasks.newspaper.orders import save_delivery_note
from tasks.newspaper.purchases import save_purchase_documents
from tasks.newspaper.structure_files import download_structure_files

PDF = b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF\n"


def encoded(content: bytes) -> str:
    return base64.b64encode(content).decode()


def archive(text: str) -> bytes:
    """A small, readable ZIP archive holding ``text`` (the same bytes every time)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        entry = zipfile.ZipInfo("f.txt", date_time=(2024, 1, 1, 0, 0, 0))
        zipped.writestr(entry, text * 20, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def answer(body: Any, content_type: str = "application/json") -> DocumentSet:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = httpx.Request("GET", "https://np.test/x")
    return document_set_from_response(
        httpx.Response(200, content=content, headers={"content-type": content_type}, request=request)
    )


def names_in(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


# -- names -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("AZ_GZA_v1", "AZ_GZA_v1"),
        ("Zustellbezirke Zürich", "Zustellbezirke Zürich"),
        ("a\\b", "a_b"),
        ("a/b", "a_b"),
        ("../escape", "_escape"),
        ("..", "fallback"),
        ("", "fallback"),
        ("   ", "fallback"),
        ("\x00\x1f\x7f", "fallback"),
        ("tab\there", "tab_here"),
        ("evil\u202etxt.exe", "evil_txt.exe"),  # a right-to-left override would disguise the name
        (" .hidden. ", "hidden"),
        ('a:b*c?"d<e>f|g', "a_b_c__d_e_f_g"),
        ("CON", "_CON"),
        ("con.tar", "_con.tar"),
        ("LPT1", "_LPT1"),
        ("nul ", "_nul"),
        ("CONSOLE", "CONSOLE"),
    ],
)
def test_safe_stem(name: str, stem: str) -> None:
    assert safe_stem(name, "fallback") == stem


def test_overlong_names_are_cut_on_a_character_boundary() -> None:
    assert safe_stem("x" * 300, "f") == "x" * MAX_STEM_BYTES
    cut = safe_stem("é" * 300, "f")
    assert cut == "é" * (MAX_STEM_BYTES // 2) and len(cut.encode()) == MAX_STEM_BYTES


def test_file_names_are_distinct_ignoring_case_and_never_reserved_ones() -> None:
    names = FileNames(reserved=["summary.md"])
    assert names.claim("AZ", ".zip") == "AZ.zip"
    assert names.claim("AZ", ".zip") == "AZ-2.zip"
    assert names.claim("az", ".ZIP") == "az-3.zip"
    assert names.claim("Summary", ".md") == "Summary-2.md"
    assert names.claim("..", ".pdf", fallback="structure-file-9") == "structure-file-9.pdf"
    assert names.claim("x", ".exe!") == "x.bin"


# -- saving a set of documents ---------------------------------------------------------------------------


def test_documents_and_the_answer_are_written(tmp_path: Path) -> None:
    body = {
        "document": {"mimeType": "application/pdf", "size": len(PDF), "data": encoded(PDF)},
        "partialDeliveryNotes": [{"document": {"mimeType": "PDF", "size": 3, "data": encoded(b"abc")}}],
    }
    saved = save_documents(answer(body), tmp_path / "out", DocumentNaming("note-7", "delivery note"))
    assert [path.name for path in saved.paths] == ["note-7.pdf", "note-7-2.pdf", "note-7.response.json"]
    assert [path.read_bytes() for path in saved.paths[:2]] == [PDF, b"abc"]
    assert json.loads(saved.paths[2].read_bytes()) == body
    assert [(file.size, len(file.sha256)) for file in saved.documents] == [(len(PDF), 64), (3, 64)]
    assert names_in(tmp_path / "out") == ["note-7-2.pdf", "note-7.pdf", "note-7.response.json"]


def test_a_document_replaces_an_older_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "sort-protocol.pdf").write_bytes(b"old")
    saved = save_documents(
        DocumentSet((Document.from_bytes(PDF, "application/pdf"),)),
        tmp_path,
        DocumentNaming("sort-protocol", "x"),
    )
    assert saved.paths == [tmp_path / "sort-protocol.pdf"]
    assert (tmp_path / "sort-protocol.pdf").read_bytes() == PDF
    assert names_in(tmp_path) == ["sort-protocol.pdf"]


def test_our_stem_is_made_safe_too(tmp_path: Path) -> None:
    saved = save_documents(
        DocumentSet((Document.from_bytes(PDF, "application/pdf"),)),
        tmp_path / "out",
        DocumentNaming("../escape", "x"),
    )
    assert saved.paths == [tmp_path / "out" / "_escape.pdf"]
    assert names_in(tmp_path) == ["out"]


def test_size_mismatch_is_a_typed_error_and_nothing_is_written(tmp_path: Path) -> None:
    document = Document(mime_type="application/pdf", size=len(PDF) + 1, data=encoded(PDF))
    with pytest.raises(DocumentRejected, match="delivery note: .*size mismatch") as caught:
        save_documents(DocumentSet((document,)), tmp_path, DocumentNaming("note", "delivery note"))
    cause = caught.value.__cause__
    assert isinstance(cause, DocumentSizeMismatch)
    assert (cause.expected, cause.actual) == (len(PDF) + 1, len(PDF))
    assert list(tmp_path.iterdir()) == []


def test_bad_base64_names_the_document_and_the_answer_is_still_written(tmp_path: Path) -> None:
    body = {
        "files": [
            structure_file("a.zip", archive("a")),
            {"fileName": "b.zip", "mimeType": "application/zip", "size": 3, "data": "not*base64"},
        ]
    }
    with pytest.raises(DocumentRejected) as caught:
        save_documents(answer(body), tmp_path, DocumentNaming("structure-files-9", "structure file"))
    message = str(caught.value)
    assert "structure file 2 of 2 ('b.zip')" in message and "not valid base64" in message
    assert caught.value.raw_path == tmp_path / "structure-files-9.response.json"
    assert str(caught.value.raw_path) in message
    assert json.loads(caught.value.raw_path.read_bytes()) == body


def test_a_document_over_the_limit_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    # Not base64 at all: only the size check can have refused it.
    huge = Document(mime_type="application/pdf", data="*" * 4000)
    with pytest.raises(
        DocumentRejected, match=r"larger than the limit of 2,000 bytes \(POSTFLOWS_DOWNLOAD_MAX_BYTES\)"
    ):
        save_documents(
            DocumentSet((huge,)),
            tmp_path,
            DocumentNaming("note", "delivery note"),
            limits=DocumentLimits(max_bytes=2000),
        )
    fits = Document.from_bytes(b"x" * 2000, "application/pdf")
    saved = save_documents(
        DocumentSet((fits,)),
        tmp_path,
        DocumentNaming("note", "delivery note"),
        limits=DocumentLimits(max_bytes=2000),
    )
    assert saved.paths[0].read_bytes() == b"x" * 2000
    claimed = Document(mime_type="application/pdf", size=10**12, data=encoded(b"x"))
    with pytest.raises(DocumentRejected, match="larger than the limit"):
        save_documents(
            DocumentSet((claimed,)),
            tmp_path,
            DocumentNaming("other", "delivery note"),
            limits=DocumentLimits(max_bytes=2000),
        )
    assert names_in(tmp_path) == ["note.pdf"]


def test_pdf_bytes_over_the_limit_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DocumentRejected, match="larger than the limit"):
        save_documents(
            answer(PDF * 100, "application/pdf"),
            tmp_path,
            DocumentNaming("n", "x"),
            limits=DocumentLimits(max_bytes=len(PDF)),
        )
    assert list(tmp_path.iterdir()) == []


# -- the newspaper tasks ---------------------------------------------------------------------------------


class StubNewspaper:
    """The client calls the tasks make, answering with DocumentSets built from the given bodies."""

    def __init__(self, body: Any, content_type: str = "application/json") -> None:
        self.body = body
        self.content_type = content_type

    async def get_structure_files(self, code: StructureFileCode) -> ApiResult[DocumentSet]:
        return ApiResult(answer(self.body, self.content_type))

    async def get_delivery_note(self, order_id: int) -> ApiResult[DocumentSet]:
        return ApiResult(answer(self.body, self.content_type))

    async def get_purchase_document(
        self, purchase_id: int, kind: PurchaseDocumentKind
    ) -> ApiResult[DocumentSet]:
        body = self.body[kind.value]
        if isinstance(body, Exception):
            raise body
        if isinstance(body, bytes):
            return ApiResult(answer(body, "application/pdf"))
        return ApiResult(DocumentSet((), raw=answer(body).raw))


def structure_file(name: str, content: bytes, mime: str = "application/zip") -> dict[str, Any]:
    return {"fileName": name, "mimeType": mime, "size": len(content), "data": encoded(content)}


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'history.db'}"


async def test_structure_files_named_alike_are_both_kept(tmp_path: Path, database_url: str) -> None:
    body = [structure_file("AZ.zip", archive("first")), structure_file("AZ.zip", archive("second"))]
    out = tmp_path / "out"
    files, _ = await download_structure_files.fn(
        StubNewspaper(body), StructureFileCode.BOTH, out, database_url
    )
    assert [(file.name, file.path.read_bytes(), file.new) for file in files] == [
        ("AZ.zip", archive("first"), True),
        ("AZ-2.zip", archive("second"), True),
    ]
    assert names_in(out) == ["AZ-2.zip", "AZ.zip", "structure-files-9.response.json"]


async def test_structure_file_names_with_backslashes_and_worse_are_made_safe(
    tmp_path: Path, database_url: str
) -> None:
    body = [
        structure_file("dir\\AZ_GZA.zip", archive("1")),
        structure_file("..", archive("2")),
        structure_file("CON.zip", archive("3")),
        structure_file("summary.md", b"# not ours", "text/markdown"),
        structure_file("x\x07" + "y" * 300 + ".zip", archive("4")),
        {"fileName": "noext", "size": len(archive("5")), "data": encoded(archive("5"))},
        {"fileName": "plain.zip", "size": len(archive("6")), "data": encoded(archive("6"))},
    ]
    out = tmp_path / "out"
    files, _ = await download_structure_files.fn(
        StubNewspaper(body), StructureFileCode.AZ_GZA, out, database_url
    )
    assert [file.name for file in files] == [
        "AZ_GZA.zip",
        "structure-file-1-2.zip",
        "_CON.zip",
        "summary-2.md",  # summary.md is the flow's
        "x_" + "y" * (MAX_STEM_BYTES - 2) + ".zip",
        "noext.bin",
        "plain.zip",
    ]
    contents = [
        archive("1"),
        archive("2"),
        archive("3"),
        b"# not ours",
        archive("4"),
        archive("5"),
        archive("6"),
    ]
    assert [file.path.read_bytes() for file in files] == contents
    assert all(file.path.parent == out for file in files)


async def test_a_damaged_zip_structure_file_is_refused_and_the_answer_kept(
    tmp_path: Path, database_url: str
) -> None:
    damaged = bytearray(archive("content"))
    damaged[40:48] = bytes(byte ^ 0xFF for byte in damaged[40:48])
    body = [structure_file("AZ_GZA_v2.zip", bytes(damaged))]
    with pytest.raises(DocumentRejected, match=r"'AZ_GZA_v2.zip'.*not a readable ZIP archive"):
        await download_structure_files.fn(
            StubNewspaper(body), StructureFileCode.AZ_GZA, tmp_path, database_url
        )
    assert names_in(tmp_path) == ["structure-files-1.response.json"]
    with pytest.raises(DocumentRejected, match="not a readable ZIP archive: File is not a zip file"):
        save_documents(
            answer([structure_file("AZ.zip", b"PK but no archive")]), tmp_path, DocumentNaming("s", "x")
        )


def test_a_zip_unpacking_past_the_limit_is_refused(tmp_path: Path) -> None:
    big = archive("z" * 200)  # 4,000 bytes unpacked, far fewer packed
    assert len(big) < 1000
    with pytest.raises(DocumentRejected, match=r"the ZIP inflates to more than the limit of 1,000 bytes"):
        save_documents(
            answer([structure_file("big.zip", big)]),
            tmp_path,
            DocumentNaming("s", "x"),
            limits=DocumentLimits(max_bytes=1000),
        )


def zip_bomb(inflated: int) -> bytes:
    """A ZIP of one member of ``inflated`` zero bytes: about a thousandfold compression (1 MB → 1 GiB in
    small)."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as bundle,
        bundle.open("AZ_GZA.txt", "w") as member,
    ):
        for _ in range(inflated // (1 << 20)):
            member.write(bytes(1 << 20))
    return buffer.getvalue()


async def test_a_zip_bomb_structure_file_is_refused_by_the_batch_downloads_ratio_check(
    tmp_path: Path, database_url: str
) -> None:
    bomb = zip_bomb(8 << 20)
    assert len(bomb) * 500 < 8 << 20  # far past 100:1, far within the size limit
    body = [structure_file("AZ_GZA_v2.zip", bomb)]
    with pytest.raises(DocumentRejected, match=r"100:1, POSTFLOWS_ZIP_MAX_RATIO.*ZIP bomb"):
        await download_structure_files.fn(
            StubNewspaper(body), StructureFileCode.AZ_GZA, tmp_path, database_url
        )
    assert names_in(tmp_path) == ["structure-files-1.response.json"]  # the answer as received, no archive
    saved = save_documents(
        answer(body), tmp_path / "lenient", DocumentNaming("s", "x"), limits=DocumentLimits(max_ratio=10_000)
    )
    assert [file.size for file in saved.documents] == [len(bomb)]


def test_a_zip_document_past_the_ratio_is_refused_whatever_its_headers_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fileio.archives import ZipInflation

    monkeypatch.setattr(ZipInflation, "check_headers", lambda self, members: None)
    with pytest.raises(DocumentRejected, match="ZIP bomb"):
        save_documents(
            answer([structure_file("b.zip", zip_bomb(4 << 20))]), tmp_path, DocumentNaming("s", "x")
        )


async def test_structure_files_as_a_list_of_base64_strings_are_kept_as_received(
    tmp_path: Path, database_url: str
) -> None:
    body = [encoded(b"PK first"), encoded(b"PK second")]
    out = tmp_path / "out"
    files, _ = await download_structure_files.fn(
        StubNewspaper(body), StructureFileCode.BOTH, out, database_url
    )
    assert [file.name for file in files] == ["structure-files-9.response.json"]
    assert json.loads(files[0].path.read_bytes()) == body
    assert files[0].size == files[0].path.stat().st_size and files[0].new


async def test_structure_files_of_an_unknown_shape_are_kept_as_received(
    tmp_path: Path, database_url: str
) -> None:
    body = {"structureFiles": {"az": {"payload": encoded(b"PK")}}}
    files, _ = await download_structure_files.fn(
        StubNewspaper(body), StructureFileCode.BOTH, tmp_path, database_url
    )
    assert [json.loads(file.path.read_bytes()) for file in files] == [body]


async def test_delivery_note_task_keeps_its_signature_and_paths(tmp_path: Path) -> None:
    body = {"document": {"mimeType": "application/pdf", "size": len(PDF), "data": encoded(PDF)}}
    paths, warnings = await save_delivery_note.fn(StubNewspaper(body), 7, tmp_path)
    assert [path.name for path in paths] == ["delivery-note.pdf", "delivery-note.response.json"]
    assert paths[0].read_bytes() == PDF and warnings == ()
    with pytest.raises(DocumentRejected, match="larger than the limit"):
        await save_delivery_note.fn(StubNewspaper(body), 7, tmp_path / "small", max_bytes=10)


async def test_delivery_note_with_bad_base64_fails_and_keeps_the_answer(tmp_path: Path) -> None:
    body = {"document": {"mimeType": "application/pdf", "size": 3, "data": "%%%"}}
    with pytest.raises(DocumentRejected, match="delivery note: .*not valid base64"):
        await save_delivery_note.fn(StubNewspaper(body), 7, tmp_path)
    assert json.loads((tmp_path / "delivery-note.response.json").read_bytes()) == body


async def test_purchase_document_without_a_document_shape_is_kept_as_received(tmp_path: Path) -> None:
    bodies = {"sort-protocol": PDF, "bundle-labels": {"labels": ["A", "B"]}}
    kinds = [PurchaseDocumentKind.SORT_PROTOCOL, PurchaseDocumentKind.BUNDLE_LABELS]
    saved = (await save_purchase_documents.fn(StubNewspaper(bodies), 31, tmp_path, kinds)).saved
    assert {kind: path.name for kind, path in saved.items()} == {
        "sort-protocol": "sort-protocol.pdf",
        "bundle-labels": "bundle-labels.response.json",
    }
    assert saved["sort-protocol"].read_bytes() == PDF
    assert json.loads(saved["bundle-labels"].read_bytes()) == {"labels": ["A", "B"]}
    assert names_in(tmp_path) == ["bundle-labels.response.json", "sort-protocol.pdf"]


async def test_missing_non_reusable_addresses_are_listed_as_not_available(tmp_path: Path) -> None:
    """newspaper.clean-up-option: a 404 for the non-reusable addresses (the clean-up did not take effect)
    lists them as not available, never as an empty document; a 404 for any other document fails."""
    missing = NotFound(
        "newspaper: HTTP 404 ordered without address clean-up", api="newspaper", status_code=404
    )
    bodies = {"sort-protocol": PDF, "non-reusable-addresses": missing}
    kinds = [PurchaseDocumentKind.NON_REUSABLE_ADDRESSES, PurchaseDocumentKind.SORT_PROTOCOL]
    found = await save_purchase_documents.fn(StubNewspaper(bodies), 31, tmp_path, kinds)
    assert list(found.saved) == ["sort-protocol"]
    assert found.not_available == {"non-reusable-addresses": str(missing)}
    assert names_in(tmp_path) == ["sort-protocol.pdf"]
    bodies = {"sort-protocol": missing}
    with pytest.raises(NotFound):
        await save_purchase_documents.fn(
            StubNewspaper(bodies), 31, tmp_path, [PurchaseDocumentKind.SORT_PROTOCOL]
        )


def test_raw_json_is_written_byte_for_byte_within_the_limit(tmp_path: Path) -> None:
    raw = answer({"items": [1, 2]}).raw
    assert isinstance(raw, RawResponse)
    assert write_json(tmp_path, "black-list", raw).read_bytes() == raw.content
    with pytest.raises(DocumentRejected, match="black-list answer: larger than the limit of 5 bytes"):
        write_json(tmp_path / "small", "black-list", raw, max_bytes=5)
    assert not (tmp_path / "small").exists()
