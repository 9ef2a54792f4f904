"""The alignments of the client's built-in profiles (``standard`` and ``legacy-de``) as the sandbox holds
them for its configured keys: its own copy of what was agreed, written down here, not read from the client.

A configured key without an agreed alignment of its own reads an upload whose header is exactly one of
these by that alignment (so ``legacy-de``'s result names the id column ``KDNR``), and any other upload by
its column names as before.
"""

# These tables repeat the client's built-in profiles (fileio.address_service.profiles) on purpose: the sandbox
# keeps its own copy of what was agreed and never reads the client's (STYLE.md 10, 12).
# pylint: disable=duplicate-code

from __future__ import annotations

from sandbox.address_service.alignments import AgreedResult, AgreedUpload, SandboxAlignment

STANDARD_COLUMNS: tuple[str, ...] = (
    "CustomID_01_in",
    "Company_in",
    "Prename_in",
    "Prename2_in",
    "Name_in",
    "MaidenName_in",
    "AddressAddition_in",
    "CoAddress_in",
    "StreetName_in",
    "HouseNo_in",
    "HouseNoAddition_in",
    "Floor_in",
    "ZIPCode_in",
    "ZIPAddition_in",
    "TownName_in",
    "Canton_in",
    "CountryCode_in",
    "PoBoxTerm_in",
    "PoBoxNo_in",
    "PoBoxZIP_in",
    "PoBoxZIPAddition_in",
    "PoBoxTownName_in",
    *(f"PassThrough_{number:02d}" for number in range(1, 11)),
)
LEGACY_DE_COLUMNS: tuple[str, ...] = (
    "KDNR (QSTAT)",
    "Firma",
    "Vorname",
    "Nachname",
    "c/o",
    "Strasse",
    "Hausnummer",
    "Postfach",
    "PLZ",
    "Ort",
)


def builtin_alignments() -> dict[str, SandboxAlignment]:
    """Profile name → the alignment held for it: ``standard`` (the ``_in`` layout, UTF-8, tab, CRLF) and
    ``legacy-de`` (German headers, Windows-1252, tab, CRLF, the result's id column named ``KDNR``)."""
    return {
        "standard": SandboxAlignment(
            upload=AgreedUpload(
                columns=STANDARD_COLUMNS,
                record_id="CustomID_01_in",
                encoding="utf-8",
                delimiter="\t",
                line_ending="\r\n",
            )
        ),
        "legacy-de": SandboxAlignment(
            upload=AgreedUpload(
                columns=LEGACY_DE_COLUMNS,
                record_id="KDNR (QSTAT)",
                encoding="cp1252",
                delimiter="\t",
                line_ending="\r\n",
            ),
            result=AgreedResult(record_id="KDNR"),
        ),
    }
