"""Saving the documents a service sends: each decoded within a size limit (a ZIP archive also within the
batch download's unpacked size and compression ratio) under a safe file name of its own, and the answer as
received kept beside them whenever it may hold something we did not understand.
"""

from __future__ import annotations

import hashlib
import io
import re
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from connectors.newspaper import Document, DocumentInvalid, DocumentSet, RawResponse
from core.errors import PostflowsError
from fileio.archives import ZipInflation, inflate_all
from fileio.files import write_received
from fileio.limits import DOWNLOAD_MAX_BYTES, DOWNLOAD_MAX_BYTES_SETTING, ZIP_MAX_RATIO

ZIP_MAGIC = b"PK\x03\x04"
MAX_STEM_BYTES = 120
"""Longest file name stem, in UTF-8 bytes: room for a suffix, the extension and the writer's temporary name
within the 255 bytes most file systems allow."""

_FORBIDDEN = frozenset('<>:"/\\|?*')  # path separators and what Windows refuses in a name
_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{port}{n}" for port in ("COM", "LPT") for n in range(10)}
)
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}")


class DocumentRejected(PostflowsError):
    """A document that cannot be saved: its data is not base64, its length is not its ``size``, or it is
    larger than the limit. ``raw_path`` is the answer as received, when it was written."""

    def __init__(self, label: str, problem: str, *, raw_path: Path | None = None) -> None:
        kept = f"; the answer as received is in {raw_path}" if raw_path is not None else ""
        super().__init__(f"{label}: {problem}{kept}")
        self.label = label
        self.problem = problem
        self.raw_path = raw_path


@dataclass(frozen=True)
class SavedFile:
    """A file written from what a service sent."""

    path: Path
    size: int
    sha256: str


@dataclass(frozen=True)
class SavedDocuments:
    """The documents of one answer as written, and the answer itself when it was kept."""

    documents: list[SavedFile]
    raw: SavedFile | None = None

    @property
    def paths(self) -> list[Path]:
        """The documents' paths, then the raw answer's."""
        return [saved.path for saved in self.documents] + ([self.raw.path] if self.raw is not None else [])


def safe_stem(name: str, fallback: str) -> str:
    """``name`` as a file name stem every common file system accepts as one plain name.

    Path separators, characters Windows refuses and control or format characters become ``_``; leading
    and trailing dots and spaces go; a Windows device name (``CON``, ``LPT1`` …) gets a leading ``_``; the
    stem is cut to :data:`MAX_STEM_BYTES`. A name with no letter or digit left becomes ``fallback``.
    """
    text = unicodedata.normalize("NFC", name)
    text = "".join(
        "_" if char in _FORBIDDEN or unicodedata.category(char)[0] == "C" else char for char in text
    )
    text = text.strip(" .").encode("utf-8")[:MAX_STEM_BYTES].decode("utf-8", "ignore").rstrip(" .")
    if not any(char.isalnum() for char in text):
        return fallback
    if text.split(".", 1)[0].rstrip(" ").upper() in _RESERVED:
        text = f"_{text}"
    return text


def their_name(document: Document) -> str | None:
    """The file name the service gave a document (``fileName`` or ``name``, not in the spec), if any."""
    extra = document.model_extra or {}
    name = extra.get("fileName") or extra.get("name")
    return name if isinstance(name, str) and name.strip() else None


def their_stem(document: Document) -> str:
    """The stem of :func:`their_name` without any directory part (``/`` or ``\\``); "" without a name."""
    name = their_name(document) or ""
    return PurePosixPath(re.split(r"[\\/]", name)[-1]).stem


class FileNames:
    """Distinct safe file names in one directory: a second ``name`` becomes ``name-2``, then ``name-3``.

    Names compare case-insensitively, as they do on the file systems of Windows and macOS.
    """

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._taken = {name.casefold() for name in reserved}

    def claim(self, stem: str, extension: str, *, fallback: str = "document") -> str:
        """A name not handed out before: ``stem`` made safe (``fallback`` when nothing is left of it) with
        ``extension`` when that is a plain one (``.bin`` otherwise)."""
        base = safe_stem(stem, fallback)
        extension = extension.lower() if _EXTENSION.fullmatch(extension) else ".bin"
        candidate, number = base, 1
        while (candidate + extension).casefold() in self._taken:
            number += 1
            candidate = f"{base}-{number}"
        self._taken.add((candidate + extension).casefold())
        return candidate + extension


def document_extension(document: Document) -> str:
    """The extension of the document's ``mimeType``; of its own file name when the type says nothing."""
    extension = document.extension
    if extension == ".bin":
        suffix = PurePosixPath(re.split(r"[\\/]", their_name(document) or "")[-1]).suffix
        if _EXTENSION.fullmatch(suffix):
            return suffix.lower()
    return extension


def decoded_content(
    document: Document,
    label: str,
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    max_ratio: float = ZIP_MAX_RATIO,
) -> bytes:
    """The document's bytes, refused before decoding when they would be more than ``max_bytes``. A ZIP
    archive (by its type or its first bytes) must open, pass every member's CRC check and stay within the
    limits of the batch download's ZIP (:class:`~fileio.archives.ZipInflation`): ``max_bytes`` unpacked,
    ``max_ratio`` times its compressed size.

    Raises:
        DocumentRejected: too large, not base64, not ``size`` bytes long, or a ZIP archive that is damaged
            or passes a limit.
    """
    if max(document.size or 0, _decoded_length_bound(document.data)) > max_bytes:
        raise DocumentRejected(label, _too_large(max_bytes))
    try:
        content = document.decoded_bytes()
    except DocumentInvalid as exc:
        raise DocumentRejected(label, str(exc)) from exc
    if document_extension(document) == ".zip" or content.startswith(ZIP_MAGIC):
        _check_archive(content, label, max_bytes, max_ratio)
    return content


def _check_archive(content: bytes, label: str, max_bytes: int, max_ratio: float) -> None:
    """Refuse a ZIP archive that does not open, fails a CRC check or passes a limit; nothing is unpacked."""
    inflation = ZipInflation(
        len(content),
        max_bytes,
        max_ratio,
        refuse=lambda problem: DocumentRejected(label, f"{problem}; not written"),
    )
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            inflate_all(archive, inflation)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
        raise DocumentRejected(label, f"not a readable ZIP archive: {exc}") from exc


@dataclass(frozen=True)
class DocumentLimits:
    """The limits a received document is saved within.

    Attributes:
        max_bytes: the limit of each document and of the answer, and of a ZIP document unpacked.
        max_ratio: the largest compression ratio of a ZIP document.
    """

    max_bytes: int = DOWNLOAD_MAX_BYTES
    max_ratio: float = ZIP_MAX_RATIO


@dataclass(frozen=True)
class DocumentNaming:
    """What the documents of one answer are, and the names of their files.

    Attributes:
        stem: our name for the documents (``stem``, ``stem-2`` …) and for the answer
            (``stem.response.json``).
        label: what the documents are, for errors ("delivery note").
        document_stem: a document's own name (index from 1) in place of ``stem``; made safe and distinct.
    """

    stem: str
    label: str
    document_stem: Callable[[Document, int], str] | None = None

    def described(self, document: Document, index: int, count: int) -> str:
        """How errors name the ``index``-th document (from 1) of ``count``."""
        own = their_name(document)
        return self.label + (f" {index} of {count}" if count > 1 else "") + (f" ({own!r})" if own else "")

    def wanted_stem(self, document: Document, index: int) -> str:
        """The stem the ``index``-th document's file is to have, before it is made safe and distinct."""
        return self.document_stem(document, index) if self.document_stem is not None else self.stem


def save_documents(
    received: DocumentSet,
    directory: Path,
    naming: DocumentNaming,
    *,
    names: FileNames | None = None,
    keep_raw: bool = True,
    limits: DocumentLimits = DocumentLimits(),
) -> SavedDocuments:
    """Write every document of one answer decoded, and the answer as received (JSON only).

    Args:
        received: the documents and the raw answer.
        directory: where the files go.
        naming: our name for the documents and the answer, what they are (for errors), and a document's
            own name where it has one.
        names: the names already handed out in ``directory``; a fresh set when not given.
        keep_raw: write the answer even when every document was saved. It is written regardless when it
            holds no document or a document cannot be saved, so nothing received is dropped.
        limits: the size of each document and of the answer, and a ZIP document's unpacked size and ratio.

    Raises:
        DocumentRejected: a document cannot be saved (the answer as received is written first).
    """
    names = names if names is not None else FileNames()
    raw, stem, label = received.raw, naming.stem, naming.label
    # Our name for the answer is claimed first, so no document's own name can take it.
    raw_path = (
        directory / names.claim(f"{stem}.response", raw.extension, fallback="response") if raw else None
    )
    count = len(received.documents)
    documents: list[SavedFile] = []
    for index, document in enumerate(received.documents, start=1):
        described = naming.described(document, index, count)
        try:
            content = decoded_content(
                document, described, max_bytes=limits.max_bytes, max_ratio=limits.max_ratio
            )
        except DocumentRejected as exc:
            if raw is not None and raw_path is not None:
                _write_raw(raw, raw_path, label, limits.max_bytes)
            # The decoding error, when there was one, stays the cause: it carries the details.
            raise DocumentRejected(described, exc.problem, raw_path=raw_path) from (exc.__cause__ or exc)
        wanted = naming.wanted_stem(document, index)
        path = directory / names.claim(wanted, document_extension(document), fallback=stem)
        documents.append(_write(path, content))
    saved_raw = None
    if raw is not None and raw_path is not None and (keep_raw or not documents):
        saved_raw = _write_raw(raw, raw_path, label, limits.max_bytes)
    return SavedDocuments(documents, saved_raw)


def _write(path: Path, content: bytes) -> SavedFile:
    written = write_received(path, content)
    return SavedFile(path, len(written), hashlib.sha256(written).hexdigest())


def _write_raw(raw: RawResponse, path: Path, label: str, max_bytes: int) -> SavedFile:
    if len(raw.content) > max_bytes:
        raise DocumentRejected(f"{label} answer", _too_large(max_bytes))
    return _write(path, raw.content)


def _decoded_length_bound(data: str) -> int:
    """The decoded length of base64 ``data`` without decoding it (more when it is not valid base64)."""
    compact = len(data) - sum(data.count(space) for space in " \t\r\n")
    tail = data.rstrip()[-2:]
    return compact * 3 // 4 - (len(tail) - len(tail.rstrip("=")))


def _too_large(max_bytes: int) -> str:
    return f"larger than the limit of {max_bytes:,} bytes ({DOWNLOAD_MAX_BYTES_SETTING}); not written"
