"""Structure files (fileCode 1 = AZ/GZA, 2 = AZA/AZB, 9 = both): download, write under safe distinct names,
and tell new content from content the history has seen before (by SHA-256).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

import history
from connectors.newspaper import (
    MESSAGE_CODES,
    ApiResult,
    Document,
    NewspaperClient,
    NewspaperMessage,
    NewspaperRejected,
    RawResponse,
    StructureFileCode,
)
from core.redaction import redact
from fileio.documents import DocumentLimits, DocumentNaming, FileNames, safe_stem, save_documents, their_stem
from fileio.limits import DOWNLOAD_MAX_BYTES, ZIP_MAX_RATIO
from history.jobs import JobData
from tasks.retrying import idempotent_step

DOCUMENT_KIND = "structure-file"
FLOW_FILE_NAMES = ("structure-files.csv", "summary.md")
"""Files the flow writes beside the structure files, which no structure file may be named like."""


class NoticeEmailJobData(JobData):
    """The facts of a notice e-mail registration: the address, the service's confirmation."""

    email: str | None = None
    confirmation: str | None = None


@dataclass(frozen=True)
class StructureFile:
    """One structure file as written, and whether its content is new to the history."""

    name: str
    path: Path
    sha256: str
    size: int
    new: bool


def file_stem(document: Document, code: int, index: int) -> str:
    """The file name without extension: the document's own (``fileName``, not in the spec) made safe, else
    ``structure-file-<code>``."""
    return safe_stem(their_stem(document), f"structure-file-{code}" + ("" if index == 1 else f"-{index}"))


def content_known(database_url: str, sha256: str) -> bool:
    """Whether a structure file with this content was recorded before."""
    factory = history.session_factory(database_url)
    with factory() as session:
        return history.find_document(session, kind=DOCUMENT_KIND, sha256=sha256) is not None


@idempotent_step("newspaper-structure-files")
async def download_structure_files(
    client: NewspaperClient,
    code: StructureFileCode,
    directory: Path,
    database_url: str,
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    max_ratio: float = ZIP_MAX_RATIO,
) -> tuple[list[StructureFile], tuple[NewspaperMessage, ...]]:
    """Download the structure files of ``code``, write each decoded, and mark those with new content.

    Each file gets a name of its own (two files named alike become ``name`` and ``name-2``), never one of
    the flow's files. The JSON answer is written as received (``structure-files-<code>.response.json``);
    when it holds no file shape it is itself the one file returned.

    Raises:
        DocumentRejected: a file does not decode or passes ``max_bytes`` (a ZIP also ``max_ratio``); the
            answer is written first.
    """
    result = await client.get_structure_files(code)
    saved = save_documents(
        result.value,
        directory,
        DocumentNaming(
            f"structure-files-{int(code)}",
            "structure file",
            document_stem=lambda document, index: file_stem(document, int(code), index),
        ),
        names=FileNames(reserved=FLOW_FILE_NAMES),
        limits=DocumentLimits(max_bytes, max_ratio),
    )
    written = saved.documents or ([saved.raw] if saved.raw is not None else [])
    files = []
    for file in written:
        known = await asyncio.to_thread(content_known, database_url, file.sha256)
        files.append(StructureFile(file.path.name, file.path, file.sha256, file.size, not known))
    return files, result.warnings


EMAIL_FIELD_SETTING = "POSTFLOWS_NEWSPAPER_STRUCTURE_FILE_EMAIL_FIELD"


class NoticeEmailRefused(NewspaperRejected):
    """The notice e-mail refused without a §7 code: most likely the body's field, a guess
    (``newspaper.structure-file-email-body``), is not the one the service reads. Like every refusal without
    a §7 code it leaves the registration uncertain."""

    def __init__(self, refused: NewspaperRejected, field: str) -> None:
        super().__init__(refused.errors, warnings=refused.warnings, status_code=refused.status_code)
        self.args = (
            redact(
                f"{refused}; the field {field!r} of its body is a guess (the specification shows no body): "
                f"set {EMAIL_FIELD_SETTING} to the field your service reads and run the same command with "
                "--resubmit"
            ),
        )
        self.field = field


@task(name="newspaper-structure-file-email", cache_policy=NO_CACHE)
async def register_notice_email(client: NewspaperClient, email: str) -> ApiResult[RawResponse]:
    """Register ``email`` for notices of new structure file versions (a side effect: send it once).

    Raises:
        NoticeEmailRefused: refused without a §7 code (naming the field's setting).
    """
    try:
        return await client.register_structure_file_email(email)
    except NewspaperRejected as refused:
        if any(error.code in MESSAGE_CODES for error in refused.errors):
            raise
        raise NoticeEmailRefused(refused, client.structure_file_email_field) from refused


def confirmation_text(answer: RawResponse) -> str:
    """The service's confirmation of acceptance as text (its body is not specified)."""
    body = answer.body
    return body if isinstance(body, str) else str(body)
