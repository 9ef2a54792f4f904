"""The address service's batch download as files: a plain result file, or a ZIP holding the result and a
moves file, unpacked under names of ours with every inflated byte counted against the limits.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fileio.archives import ZipInflation, inflate
from fileio.errors import ResultFileError
from fileio.files import ZIP_MAGIC, atomic_open, scrubbed_chunks
from fileio.limits import DOWNLOAD_MAX_BYTES, ZIP_MAX_RATIO

RESULT_FILE_NAME = "result.txt"
MOVES_FILE_NAME = "moves.txt"


@dataclass(frozen=True)
class DownloadedFiles:
    """The files of one batch download: the result file and, for a maintenance run, the moves file."""

    result: Path
    moves: Path | None = None


def unpack_download(
    path: Path,
    workdir: Path,
    *,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    max_ratio: float = ZIP_MAX_RATIO,
) -> DownloadedFiles:
    """Recognise a downloaded file: a plain result file, or a ZIP holding the result and a moves file.

    A ZIP is recognised by its magic bytes, not its name. In a ZIP the member whose name contains "move" is
    the moves file and the largest other member is the result. They are written to ``workdir`` under names
    of ours (``result.txt``, ``moves.txt``), never the names in the archive, scrubbed of this process's
    secrets as a plain download is (:func:`~fileio.files.write_stream`). Inflated bytes are counted as
    they come, whatever the archive's headers claim: more than ``max_bytes`` in all, or more than
    ``max_ratio`` times the compressed size (per member, and for the archive as a whole), stops the
    unpacking and leaves neither file.

    Raises:
        ResultFileError: the ZIP is damaged, holds no result file, or passes a limit.
    """
    with path.open("rb") as handle:
        magic = handle.read(len(ZIP_MAGIC))
    if magic != ZIP_MAGIC:
        return DownloadedFiles(result=path)
    written: list[Path] = []
    try:
        with zipfile.ZipFile(path) as archive:
            members = [member for member in archive.infolist() if not member.is_dir()]
            moves = [member for member in members if "move" in Path(member.filename).name.lower()]
            results = sorted((m for m in members if m not in moves), key=lambda m: m.file_size, reverse=True)
            if not results:
                raise ResultFileError(
                    f"the ZIP holds no result file (members: {archive.namelist()[:20]})", path=path
                )
            wanted = [(results[0], RESULT_FILE_NAME)] + ([(moves[0], MOVES_FILE_NAME)] if moves else [])
            inflation = ZipInflation(
                path.stat().st_size,
                max_bytes,
                max_ratio,
                refuse=lambda problem: ResultFileError(f"{problem}; nothing was unpacked", path=path),
            )
            inflation.check_headers([member for member, _ in wanted])
            for member, name in wanted:
                written.append(_extract(archive, member, _unpacked_path(workdir, name, path), inflation))
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        _remove(written)
        raise ResultFileError(f"damaged ZIP: {exc}", path=path) from exc
    except BaseException:
        _remove(written)
        raise
    return DownloadedFiles(result=written[0], moves=written[1] if len(written) > 1 else None)


def _unpacked_path(workdir: Path, name: str, download: Path) -> Path:
    target = workdir / name
    if target.resolve() == download.resolve():  # the download itself may be named like an unpacked file
        target = workdir / f"unpacked-{name}"
    return target


def _extract(
    archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, inflation: ZipInflation
) -> Path:
    with atomic_open(target) as sink:
        for chunk in scrubbed_chunks(inflate(archive, member, inflation)):  # kept as received, less secrets
            sink.write(chunk)
    return target


def _remove(paths: Sequence[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
