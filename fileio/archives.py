"""ZIP archives a service sends, held to our limits: inflated bytes are counted as they come, whatever the
headers claim, against a total size and a compression ratio (per member and for the whole archive). The one
check of every archive received: the batch download's and a newspaper document's.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fileio.files import ZIP_MAGIC, atomic_path, stream_scrubber
from fileio.limits import DOWNLOAD_MAX_BYTES_SETTING, ZIP_MAX_RATIO_SETTING

INFLATE_CHUNK = 1 << 16
# Below this many inflated bytes the ratio is not judged: a small member can do no harm, and a few
# kilobytes of repeated text legitimately compress far better than 100:1.
RATIO_GRACE_BYTES = 1 << 20


@dataclass
class ZipInflation:
    """The bytes inflated from one archive so far, against the size and compression-ratio limits.

    Attributes:
        archive_size: the archive's size in bytes (compressed).
        max_bytes: the most bytes inflated in all.
        max_ratio: the largest ratio of inflated to compressed size, per member and for the archive.
        refuse: makes the error raised from the problem found (one sentence naming the limit's setting).
        total: bytes inflated so far.
    """

    archive_size: int
    max_bytes: int
    max_ratio: float
    refuse: Callable[[str], Exception]
    total: int = 0

    def check_headers(self, members: Sequence[zipfile.ZipInfo]) -> None:
        """Refuse early what the headers already admit to; the counting in :meth:`add` is what holds."""
        for member in members:
            self._check_member(member, member.file_size)
        self._check_total(sum(member.file_size for member in members))

    def add(self, member: zipfile.ZipInfo, inflated: int, chunk: int) -> None:
        """Count ``chunk`` more bytes of ``member`` (``inflated`` of it so far)."""
        self.total += chunk
        self._check_member(member, inflated)
        self._check_total(self.total)

    def _check_member(self, member: zipfile.ZipInfo, inflated: int) -> None:
        if inflated > RATIO_GRACE_BYTES and inflated > max(member.compress_size, 1) * self.max_ratio:
            raise self.refuse(
                f"ZIP member {member.filename[:100]!r} inflates to more than {self.max_ratio:g} times its "
                f"compressed size of {member.compress_size:,} bytes (limit {self.max_ratio:g}:1, "
                f"{ZIP_MAX_RATIO_SETTING}); refused as a possible ZIP bomb"
            )
        self._check_size(inflated)

    def _check_total(self, total: int) -> None:
        if total > RATIO_GRACE_BYTES and total > max(self.archive_size, 1) * self.max_ratio:
            raise self.refuse(
                f"the ZIP inflates to more than {self.max_ratio:g} times its size of "
                f"{self.archive_size:,} bytes (limit {self.max_ratio:g}:1, {ZIP_MAX_RATIO_SETTING}); "
                "refused as a possible ZIP bomb"
            )
        self._check_size(total)

    def _check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise self.refuse(
                f"the ZIP inflates to more than the limit of {self.max_bytes:,} bytes "
                f"({DOWNLOAD_MAX_BYTES_SETTING})"
            )


def inflate(archive: zipfile.ZipFile, member: zipfile.ZipInfo, inflation: ZipInflation) -> Iterator[bytes]:
    """The content of ``member`` in chunks, each counted by ``inflation`` before it is handed on; reading to
    the end checks the member's CRC.

    Raises:
        zipfile.BadZipFile: the member cannot be found, or its content fails its CRC check.
        Exception: what ``inflation.refuse`` makes, when a limit is passed.
    """
    inflated = 0
    try:
        opened = archive.open(member)
    except (OSError, ValueError) as exc:  # the directory points before the start of the file, or past it
        raise zipfile.BadZipFile(f"member {member.filename[:100]!r} cannot be found: {exc}") from exc
    with opened as source:
        while chunk := source.read(INFLATE_CHUNK):
            inflated += len(chunk)
            inflation.add(member, inflated, len(chunk))
            yield chunk


def inflate_all(archive: zipfile.ZipFile, inflation: ZipInflation) -> None:
    """Inflate every member of ``archive`` within the limits, keeping nothing: an archive that passes
    opens, stays within the limits and passes every CRC check."""
    members = [member for member in archive.infolist() if not member.is_dir()]
    inflation.check_headers(members)
    for member in members:
        for _ in inflate(archive, member, inflation):
            pass


class _Unscrubbed(Exception):
    """The archive cannot be read within the limits: it is left as it came (its unpacking refuses it)."""


def scrub_archive(path: Path, *, max_bytes: int, max_ratio: float) -> bool:
    """Rewrite the ZIP archive at ``path`` (an answer kept as received) without this process's secrets
    (:class:`~core.redaction.StreamScrubber`) when a member holds one: every member is inflated within
    the limits and scrubbed as it streams, never held whole; an archive that holds none is left as it came,
    so is one that cannot be read within the limits (its unpacking refuses it, naming why). Returns whether
    it was rewritten."""
    with path.open("rb") as handle:
        if handle.read(len(ZIP_MAGIC)) != ZIP_MAGIC:
            return False
    try:
        with zipfile.ZipFile(path) as archive:
            if not _holds_secrets(archive, path, max_bytes, max_ratio):
                return False
            with (
                atomic_path(path) as temporary,
                zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as copy,
            ):
                inflation = _inflation(path, max_bytes, max_ratio)
                for member in archive.infolist():
                    if member.is_dir():
                        copy.writestr(member, b"")
                        continue
                    info = zipfile.ZipInfo(member.filename, member.date_time)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    scrubber = stream_scrubber()
                    with copy.open(info, "w", force_zip64=True) as sink:
                        for chunk in inflate(archive, member, inflation):
                            sink.write(scrubber.feed(chunk))
                        sink.write(scrubber.finish())
    except (_Unscrubbed, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError):
        return False
    return True


def _holds_secrets(archive: zipfile.ZipFile, path: Path, max_bytes: int, max_ratio: float) -> bool:
    inflation = _inflation(path, max_bytes, max_ratio)
    members = [member for member in archive.infolist() if not member.is_dir()]
    inflation.check_headers(members)
    for member in members:
        scrubber = stream_scrubber()
        for chunk in inflate(archive, member, inflation):
            scrubber.feed(chunk)
        scrubber.finish()
        if scrubber.found:
            return True
    return False


def _inflation(path: Path, max_bytes: int, max_ratio: float) -> ZipInflation:
    def refuse(problem: str) -> Exception:
        return _Unscrubbed(problem)

    return ZipInflation(path.stat().st_size, max_bytes, max_ratio, refuse=refuse)
