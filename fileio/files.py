"""The one atomic file writer of the project: every file a task writes goes through it, and every directory
it needs is made here.

A file is written under a temporary name beside its target and moved into place, so no reader ever sees half
of it. Under a private root (the data dir, registered by the composition root with :func:`keep_private`)
files are 0600 and the directories made for them 0700, whatever the umask, and the root itself is its
owner's alone; elsewhere (a user's ``--out``) a file gets the permissions of an ordinary new file (``0666``
less the umask) and a directory those of ``mkdir``. ``max_bytes`` bounds a stream whose size the remote side
decides.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading
from collections.abc import AsyncIterable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from core.redaction import StreamScrubber

ZIP_MAGIC = b"PK\x03\x04"
"""How a ZIP archive starts."""

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700

_umask_lock = threading.Lock()
_private_guard = threading.Lock()
_private_roots: set[Path] = set()
_secured_roots: set[Path] = set()


class FileTooLarge(OSError):
    """A stream grew beyond the size limit set for it; nothing was written."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(f"{path.name}: larger than the limit of {limit:,} bytes; nothing was written")
        self.path = path
        self.limit = limit


class ReadTooLarge(OSError):
    """A file (or device, or pipe) holds more than a reader's limit; only the limit and a byte were read."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(errno.EFBIG, f"more than the limit of {limit:,} bytes; not read")
        self.path = path
        self.limit = limit


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, reading at most ``limit`` + 1 of them whatever it is (a regular file, a device
    such as ``/dev/zero``, a named pipe): its size is checked first where it has one, then the read itself is
    bounded, so a file that grows, a device or a pipe is never read whole. A pipe is opened without waiting
    for a writer (none: it reads as empty).

    Raises:
        ReadTooLarge: more than ``limit`` bytes.
        OSError: it cannot be opened or read.
    """
    info = path.stat()
    if stat.S_ISREG(info.st_mode) and info.st_size > limit:
        raise ReadTooLarge(path, limit)
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        os.set_blocking(descriptor, True)
        chunks: list[bytes] = []
        wanted = limit + 1
        while wanted > 0:
            chunk = os.read(descriptor, min(wanted, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
    finally:
        os.close(descriptor)
    if wanted <= 0:
        raise ReadTooLarge(path, limit)
    return b"".join(chunks)


def current_umask() -> int:
    """The process umask, read without changing it where the platform allows.

    Linux shows it in ``/proc/self/status`` (psutil does not report a umask); elsewhere it is read by
    setting it and setting it back, which another thread creating a file meanwhile would see."""
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


def keep_private(root: Path) -> None:
    """Make every file written and every directory made under ``root`` its owner's alone (0600, 0700), and
    ``root`` itself 0700 when something is first written under it. Registered once per root and process."""
    with _private_guard:
        _private_roots.add(Path(os.path.abspath(root)))


def private_root(path: Path) -> Path | None:
    """The private root ``path`` lies under (or is), or None. Compared as absolute paths, symbolic links
    resolved on both sides."""
    with _private_guard:
        roots = tuple(_private_roots)
    if not roots:
        return None
    candidates = {Path(os.path.abspath(path)), path.resolve()}
    for root in roots:
        for resolved_root in {root, root.resolve()}:
            if any(candidate.is_relative_to(resolved_root) for candidate in candidates):
                return root
    return None


def file_mode_for(path: Path) -> int:
    """The mode a new file at ``path`` gets: 0600 under a private root, else ``0666`` less the umask."""
    return PRIVATE_FILE_MODE if private_root(path) is not None else new_file_mode()


def make_dirs(directory: Path) -> Path:
    """Make ``directory`` and its missing parents; under a private root they are made 0700 (and the root is
    made its owner's alone), elsewhere as ``mkdir`` makes them. Returns ``directory``."""
    root = private_root(directory)
    if root is None:
        directory.mkdir(parents=True, exist_ok=True)
        return directory
    _secure_root(root)
    missing: list[Path] = []
    current = Path(os.path.abspath(directory))
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # another process or thread made it first
        os.chmod(made, PRIVATE_DIR_MODE)  # exactly 0700, whatever the umask
    return directory


OWN_FOLDERS = ("download", "documents")
"""The folders a flow makes inside its output directory for files of its own."""


def own_folder(directory: Path) -> Path:
    """Make ``directory``, a folder of the flow's own inside an output directory (``download/``), as
    :func:`make_dirs` does; a symbolic link standing there is removed first (its target left untouched), so
    nothing the flow writes there lands where the link points. Returns ``directory``."""
    if directory.is_symlink():
        directory.unlink()
    return make_dirs(directory)


def _secure_root(root: Path) -> None:
    """Make ``root`` (once per process) and take group and others' access to it away: every file beneath,
    old ones included, is then its owner's alone. A shared directory (sticky, like /tmp), the home
    directory, or one owned by someone else is left as it is."""
    with _private_guard:
        if root in _secured_roots:
            return
        _secured_roots.add(root)
    try:
        root.mkdir(mode=PRIVATE_DIR_MODE, parents=True)
    except FileExistsError:
        pass
    else:
        os.chmod(root, PRIVATE_DIR_MODE)
        return
    info = root.stat()
    shared = bool(info.st_mode & stat.S_ISVTX) or root.resolve() in (_home(), Path("/"))
    if info.st_mode & 0o077 and not shared and info.st_uid == os.getuid():
        os.chmod(root, stat.S_IMODE(info.st_mode) & 0o700)


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except RuntimeError:  # no home directory known
        return None


@contextmanager
def atomic_path(path: Path, *, durable: bool = False, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for a writer that wants a file name (pandas, xlsxwriter).

    On success the temporary file gets its permissions (``mode`` when given, else :func:`file_mode_for`:
    0600 under a private root) and replaces ``path``; on any failure it is removed and ``path`` is left as
    it was. ``durable`` flushes it to disk before the move. The temporary file is created readable by its
    owner only, so a private file is never readable by others, not even while it is written.
    """
    make_dirs(path.parent)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=f".part{path.suffix}", dir=path.parent
    )
    os.close(handle)
    temporary_path = Path(temporary)
    try:
        yield temporary_path
        os.chmod(temporary_path, file_mode_for(path) if mode is None else mode)
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


def write_received(path: Path, content: bytes, *, durable: bool = False) -> bytes:
    """Write an answer kept as received (or a document it held) to ``path`` atomically, without the secrets
    registered in this process (:func:`core.redaction.scrubbed_bytes`: configured secrets, client
    secrets, passwords, bearer tokens issued in this run). Returns the bytes written: a digest is taken of
    these, never of what arrived."""
    written = scrubbed_bytes(content)
    write_bytes(path, written, durable=durable)
    return written


_NO_LINK = frozenset({errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP})
"""Why a hard link cannot be made where the files can be: another filesystem, one without links, too many."""


def hard_link(source: Path, target: Path) -> bool:
    """Make ``target`` the same file as ``source`` (one inode, its permissions), replacing ``target``
    atomically; True when done, False where the filesystem cannot link them (another filesystem, links not
    supported), ``target`` then untouched."""
    make_dirs(target.parent)
    if target.exists() and os.path.samefile(source, target):
        return True
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".link", dir=target.parent)
    os.close(handle)
    os.unlink(temporary)  # only the unique name is wanted: os.link makes the entry
    try:
        os.link(source, temporary)
    except OSError as error:
        if error.errno in _NO_LINK:
            return False
        raise
    try:
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True


def write_text(path: Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; returns ``path``."""
    return write_bytes(path, text.encode(encoding))


async def write_stream(path: Path, chunks: AsyncIterable[bytes], *, max_bytes: int | None = None) -> int:
    """Write an async byte stream, an answer kept as received (a download), to ``path`` atomically, scrubbed
    as it streams of the secrets :func:`write_received` scrubs (:class:`core.redaction.StreamScrubber`:
    a secret cut by a chunk boundary is found too, the file is never held whole); a ZIP archive is written
    as it came (:func:`fileio.archives.scrub_archive` rewrites it when a member holds a secret). Returns the
    size received.

    Raises:
        FileTooLarge: the stream passed ``max_bytes``; nothing is left on disk.
    """
    size = 0
    head = b""  # the first bytes, until they tell a ZIP archive from a file to scrub
    scrubber: StreamScrubber | None = None
    decided = False
    with atomic_open(path) as handle:
        async for chunk in chunks:
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise FileTooLarge(path, max_bytes)
            if not decided:
                head += chunk
                if len(head) < len(ZIP_MAGIC):
                    continue
                decided, chunk, head = True, head, b""
                scrubber = None if chunk.startswith(ZIP_MAGIC) else stream_scrubber()
            handle.write(scrubber.feed(chunk) if scrubber is not None else chunk)
        handle.write(scrubber.finish() if scrubber is not None else scrubbed_bytes(head))
    return size


def stream_scrubber() -> StreamScrubber:
    """A scrubber of one stream kept as received (:class:`core.redaction.StreamScrubber`)."""
    from core.redaction import StreamScrubber  # not at import, as above

    return StreamScrubber()


def scrubbed_chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` scrubbed as :func:`write_stream` scrubs a stream (a member of a downloaded ZIP)."""
    scrubber = stream_scrubber()
    for chunk in chunks:
        yield scrubber.feed(chunk)
    yield scrubber.finish()


def scrubbed_bytes(content: bytes) -> bytes:
    """``content`` without the secrets registered in this process (see :func:`write_received`)."""
    from core.redaction import scrubbed_bytes as scrub  # not at import, as above

    return scrub(content)
