"""The extra files of an aligned batch: one per replace item its alignment declares in ``outputs``.

- The output named by ``moves`` holds the move notifications (§2.3: the second file, old and new address),
  in the layout of ``moves.txt`` and with its header alone when there are none.
- A replace item naming ``STATISTICFILE`` is a statistics file: the number of records and of each QSTAT
  (§2.4), in the language its last part names (``_DE``, ``_FR``, ``_IT``, ``_EN``; English otherwise) as
  tab-separated text (CRLF, Windows-1252), or as a small UTF-8 XML document when its name says ``XML``.
- Any other replace item gets one line of text saying the sandbox writes nothing for it.
"""

from __future__ import annotations

from collections import Counter
from xml.etree import ElementTree

from sandbox.address_service.alignments import SandboxAlignment
from sandbox.address_service.matching import MatchResult

QSTAT_ORDER = ("1", "2", "3", "4", "25", "26", "27", "50", "51")
# title, key, records, count, rows without a QSTAT
_LABELS: dict[str, tuple[str, str, str, str, str]] = {
    "DE": ("Statistik des Abgleichs", "Schlüssel", "Datensätze", "Anzahl", "ohne QSTAT"),
    "FR": ("Statistique de l'alignement", "Clé", "Enregistrements", "Nombre", "sans QSTAT"),
    "IT": ("Statistica dell'allineamento", "Chiave", "Record", "Numero", "senza QSTAT"),
    "EN": ("Alignment statistics", "Key", "Records", "Count", "without QSTAT"),
}


def item_name(item: str) -> str:
    """``{###STATISTICFILE_FR###}`` → ``STATISTICFILE_FR``."""
    return item.strip().removeprefix("{###").removesuffix("###}")


def is_statistics(item: str) -> bool:
    return "STATISTICFILE" in item_name(item).upper()


def is_xml(item: str) -> bool:
    return "XML" in item_name(item).upper()


def output_filename(item: str, alignment: SandboxAlignment | None) -> str:
    """The file name a download of the output for ``item`` carries."""
    if alignment is not None and item == alignment.moves_item:
        return "moves.txt"
    return f"{item_name(item).lower()}.{'xml' if is_xml(item) and is_statistics(item) else 'txt'}"


def write_extra_outputs(
    alignment: SandboxAlignment, key: str, results: list[MatchResult], moves: bytes | None
) -> dict[str, bytes]:
    """Replace item → content of every output ``alignment`` declares (``moves``: the declared move file)."""
    written: dict[str, bytes] = {}
    for item in alignment.outputs.values():
        if item == alignment.moves_item and moves is not None:
            written[item] = moves
        elif is_statistics(item):
            written[item] = statistics_file(item, key, results)
        else:
            written[item] = f"{item}: the sandbox writes no content for this output\r\n".encode("cp1252")
    return written


def qstat_counts(results: list[MatchResult]) -> dict[str, int]:
    """Rows per QSTAT: every §2.4 number (zero included), then any other value found ("" = no QSTAT)."""
    found = Counter(result.qstat for result in results)
    counts = {qstat: found.pop(qstat, 0) for qstat in QSTAT_ORDER}
    counts.update(sorted(found.items()))
    return counts


def statistics_file(item: str, key: str, results: list[MatchResult]) -> bytes:
    """The statistics file for replace item ``item`` (language and format from its name)."""
    counts = qstat_counts(results)
    if is_xml(item):
        root = ElementTree.Element("Statistics", key=key, records=str(len(results)))
        for qstat, count in counts.items():
            ElementTree.SubElement(root, "QSTAT", code=qstat, count=str(count))
        return bytes(ElementTree.tostring(root, encoding="utf-8", xml_declaration=True))
    language = item_name(item).upper().rpartition("_")[2]
    title, key_label, records, count_label, without = _LABELS.get(language, _LABELS["EN"])
    lines = [[title], [key_label, key], [records, str(len(results))], ["QSTAT", count_label]]
    lines += [[qstat or without, str(count)] for qstat, count in counts.items()]
    return "".join("\t".join(line) + "\r\n" for line in lines).encode("cp1252", errors="replace")
