"""The one atomic file writer of the project: every file a task writes goes through it.

A file is written under a temporary name beside its target and moved into place, so no reader ever sees half
of it; it gets the permissions of an ordinary new file (``0666`` less the umask, 0644 under umask 022), not
``mkstemp``'s 0600. ``max_bytes`` bounds a stream whose size the remote side decides.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import AsyncIterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_umask_lock = threading.Lock()


class FileTooLarge(OSError):
    """A stream grew beyond the size limit set for it; nothing was written."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(f"{path.name}: larger than the limit of {limit:,} bytes; nothing was written")
        self.path = path
        self.limit = limit


def current_umask() -> int:
    """The process umask, read without changing it where the platform allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    with _umask_lock:  # os.umask can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode an ordinary ``open(path, "w")`` would give a new file."""
    return 0o666 & ~current_umask()


@contextmanager
def atomic_path(path: Path, *, durable: bool = False, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for a writer that wants a file name (pandas, xlsxwriter).

    On success the temporary file gets ordinary permissions (``mode`` when given: 0o600 for a file only
    its owner may read) and replaces ``path``; on any failure it is removed and ``path`` is left as it was.
    ``durable`` flushes it to disk before the move. The temporary file is created readable by its owner
    only, so a private file is never readable by others, not even while it is written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=f".part{path.suffix}", dir=path.parent
    )
    os.close(handle)
    temporary_path = Path(temporary)
    try:
        yield temporary_path
        os.chmod(temporary_path, new_file_mode() if mode is None else mode)
        if durable:
            with temporary_path.open("rb") as written:
                os.fsync(written.fileno())
        os.replace(temporary_path, path)
    except BaseException:
        temporary_path.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_open(path: Path, *, durable: bool = False, mode: int | None = None) -> Iterator[BinaryIO]:
    """Yield a binary file object whose content becomes ``path`` when the block ends without an error."""
    with atomic_path(path, durable=durable, mode=mode) as temporary, temporary.open("wb") as handle:
        yield handle


def write_bytes(path: Path, content: bytes, *, durable: bool = False, mode: int | None = None) -> Path:
    """Write ``content`` to ``path`` atomically (with permissions ``mode`` when given); returns ``path``."""
    with atomic_open(path, durable=durable, mode=mode) as handle:
        handle.write(content)
    return path


def write_text(path: Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; returns ``path``."""
    return write_bytes(path, text.encode(encoding))


async def write_stream(path: Path, chunks: AsyncIterable[bytes], *, max_bytes: int | None = None) -> int:
    """Write an async byte stream to ``path`` atomically; returns the size written.

    Raises:
        FileTooLarge: the stream passed ``max_bytes``; nothing is left on disk.
    """
    size = 0
    with atomic_open(path) as handle:
        async for chunk in chunks:
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise FileTooLarge(path, max_bytes)
            handle.write(chunk)
    return size
