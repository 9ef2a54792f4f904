"""Structure files (fileCode 1 = AZ/GZA, 2 = AZA/AZB, 9 = both): download, write, and tell new content from
content the history has seen before (by SHA-256).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePath

from prefect import task
from prefect.cache_policies import NO_CACHE

import history
from connectors.newspaper import Document, NewspaperClient, NewspaperMessage, StructureFileCode

DOCUMENT_KIND = "structure-file"


@dataclass(frozen=True)
class StructureFile:
    """One structure file as written, and whether its content is new to the history."""

    name: str
    path: Path
    sha256: str
    size: int
    new: bool


def file_stem(document: Document, code: int, index: int) -> str:
    """The file name without extension (``fileName``, not in the spec), else ``structure-file-<code>``."""
    extra = document.model_extra or {}
    name = extra.get("fileName") or extra.get("name")
    if isinstance(name, str) and PurePath(name).stem.strip(". "):
        return PurePath(PurePath(name).name).stem
    return f"structure-file-{code}" + ("" if index == 1 else f"-{index}")


def content_known(database_url: str, sha256: str) -> bool:
    """Whether a structure file with this content was recorded before."""
    factory = history.session_factory(database_url)
    with factory() as session:
        return history.find_document(session, kind=DOCUMENT_KIND, sha256=sha256) is not None


@task(name="newspaper-structure-files", cache_policy=NO_CACHE)
async def download_structure_files(
    client: NewspaperClient, code: StructureFileCode, directory: Path, database_url: str
) -> tuple[list[StructureFile], tuple[NewspaperMessage, ...]]:
    """Download the structure files of ``code``, write each decoded, and mark those with new content."""
    result = await client.get_structure_files(code)
    files: list[StructureFile] = []
    for index, document in enumerate(result.value.documents, start=1):
        content = document.decoded_bytes()
        digest = hashlib.sha256(content).hexdigest()
        path = document.save(directory, file_stem(document, int(code), index))
        files.append(
            StructureFile(path.name, path, digest, len(content), not content_known(database_url, digest))
        )
    return files, result.warnings


@task(name="newspaper-structure-file-email", cache_policy=NO_CACHE)
async def register_notice_email(
    client: NewspaperClient, email: str
) -> tuple[str, tuple[NewspaperMessage, ...]]:
    """Register ``email`` for notices of new structure file versions; returns the service's confirmation."""
    result = await client.register_structure_file_email(email)
    body = result.value.body
    return (body if isinstance(body, str) else str(body)), result.warnings
