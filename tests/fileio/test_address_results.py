"""The batch output: download unpacking, result parsing, status decoding, merge, summary, reports."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pyarrow as pa
import pytest

from connectors.address_service.codes import SHORT_REPORT_POSITIONS
from fileio.address_service import result_arrow, result_file
from fileio.address_service.downloads import unpack_download
from fileio.address_service.moves_file import read_moves_file
from fileio.address_service.records import AddressInput, read_address_file
from fileio.address_service.result_codes import decode_results, decode_short_report, qstat_summary
from fileio.address_service.result_file import read_result_file
from fileio.address_service.results import merge_results, write_address_results
from fileio.address_service.user_results import user_results
from fileio.archives import ZipInflation
from fileio.errors import DuplicateRecordIds, ResultFileError
from fileio.textfiles import detect_encoding, sniff_delimiter
from tasks.address_service.steps import PreparedInput, build_address_results
from tests.outputs import UNGUARDED, read_output_csv

# What the service sends back for an upload of RecordId, Kundennummer and the address columns: the uploaded
# columns as uploaded, then the §2.3 fields in the batch file's own header spelling.
RESULT_HEADER = (
    "RecordId\tKundennummer\tPrename\tName\tStreetname\tHouseNo\tZIPCode\tTownName\t"
    "QSTAT\tShortReport\tCorrectionType\tTotalScore\tValidFrom\tBirthDate\tHouseKey\t"
    "Company\tPrename\tName\tStreetName\tHouseNo\tZIPCode\tTownName\tPOBoxTerm"
)
RESULT_ROWS = [
    "1\t007\tJürg\tMüller\tBahnhofstr.\t12\t3000\tBern\t1\t-1-1---3311-1----------A\t1\t100.00\t\t\t123\t"
    "\tJürg\tMüller\tBahnhofstrasse\t12\t3000\tBern\t",
    # ragged: this row stops early
    "2\t008\tAnna\tKeller\tSeeweg\t3\t8001\tZürich\t51\t0000000000000000000000\t0\t94.50",
    "3\t009\tJean\tRoux\tRue\t1\t1204\tGenève\tK\t1\t0\t98.00",
]


def write_result(
    path: Path, encoding: str, header: str = RESULT_HEADER, rows: list[str] = RESULT_ROWS
) -> Path:
    path.write_bytes(("\r\n".join([header, *rows]) + "\r\n").encode(encoding))
    return path


def address_input(tmp_path: Path) -> AddressInput:
    path = tmp_path / "kunden.csv"
    path.write_text(
        "Kundennummer;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "007;Jürg;Müller;Bahnhofstr.;12;3000;Bern\n008;Anna;Keller;Seeweg;3;8001;Zürich\n"
        "009;Jean;Roux;Rue;1;1204;Genève\n010;Ida;Lang;Weg;4;3000;Bern\n",
        encoding="utf-8",
    )
    return read_address_file(path)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252"])
def test_result_file_in_any_of_the_three_encodings(tmp_path: Path, encoding: str) -> None:
    frame = read_result_file(write_result(tmp_path / "result.txt", encoding))
    assert frame.columns[0] == "RecordId"
    assert frame.loc[0, "Name"] == "Müller"
    assert frame.loc[2, "TownName_uploaded"] == "Genève"
    assert len(frame) == 3


def test_result_headers_are_folded_and_uploaded_copies_renamed(tmp_path: Path) -> None:
    frame = read_result_file(write_result(tmp_path / "result.txt", "cp1252"))
    assert list(frame.columns) == [
        "RecordId",
        "Kundennummer",
        "Prename_uploaded",
        "Name_uploaded",
        "Streetname_uploaded",
        "HouseNo_uploaded",
        "ZIPCode_uploaded",
        "TownName_uploaded",
        "QSTAT",
        "ShortReport",
        "CorrectionType",
        "TotalScore",
        "ValidFrom",
        "Birthdate",
        "Housekey",
        "Company",
        "Prename",
        "Name",
        "Streetname",
        "HouseNo",
        "ZIPCode",
        "TownName",
        "PoBoxTerm",
    ]
    assert frame.loc[0, "Streetname"] == "Bahnhofstrasse"
    assert frame.loc[0, "Streetname_uploaded"] == "Bahnhofstr."
    assert frame.loc[0, "Kundennummer"] == "007"


def test_ragged_rows_are_padded_with_empty_strings(tmp_path: Path) -> None:
    frame = read_result_file(write_result(tmp_path / "result.txt", "utf-8"))
    assert frame.loc[1, "TotalScore"] == "94.50"
    assert frame.loc[1, ["ValidFrom", "Streetname", "PoBoxTerm"]].tolist() == ["", "", ""]
    assert not frame.isna().any().any()


def test_surplus_fields_are_kept_in_extra_columns(tmp_path: Path) -> None:
    path = write_result(
        tmp_path / "r.txt", "utf-8", "RecordId\tQSTAT\tShortReport", ["1\t1\t-\textra", "2\t50"]
    )
    frame = read_result_file(path)
    assert list(frame.columns) == ["RecordId", "QSTAT", "ShortReport", "Unnamed: 4"]
    assert frame.to_numpy().tolist() == [["1", "1", "-", "extra"], ["2", "50", "", ""]]


def test_empty_result_file_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(ResultFileError, match="empty.txt: result file is empty"):
        read_result_file(empty)


def test_decode_scores_correction_type_and_qstat(tmp_path: Path) -> None:
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    assert decoded["TotalScore"].tolist() == [100.0, 94.5, 98.0]
    assert decoded["TotalScore"].dtype == np.float64
    assert decoded["CorrectionType"].dtype == "Int64"
    assert decoded["CorrectionType"].tolist() == [1, 0, 0]
    assert decoded["QSTAT_Designation"].tolist() == [
        "Person hit",
        "Address unknown",
        "Original (header duplicate)",
    ]
    columns = list(decoded.columns)
    assert columns.index("QSTAT_Designation") == columns.index("QSTAT") + 1
    assert columns.index("QSTAT_Meaning") == columns.index("QSTAT") + 2
    assert columns[-24:] == [f"SR{n:02d}_{name}" for n, name in enumerate(SHORT_REPORT_POSITIONS, start=1)]


@pytest.mark.parametrize(
    ("qstat", "designation", "meaning"),
    [
        ("1", "Person hit", "person known at this address, items can be delivered"),
        ("2", "Household hit", "household or last name known at this address"),
        ("3", "Company hit", "company known at this address"),
        ("4", "Relocation hit", "a movers' address exists"),
        ("25", "Deceased / company no longer in business", ""),
        ("26", "International relocation hit", "an unverified international address exists"),
        ("27", "Relocated, unknown", "new address unknown or not disclosable"),
        ("50", "Person unknown at this address", ""),
        (
            "51",
            "Address unknown",
            "address incorrect or incomplete (the building combination does not exist)",
        ),
        ("K", "Original (header duplicate)", "address occurs several times and matches the group best"),
        ("F", "Duplicate (subsequent duplicate)", "address occurs several times with lower congruity"),
        ("77", "Unknown QSTAT", "QSTAT '77' is not in the status table"),
        ("", "", ""),
    ],
)
def test_each_qstat_is_decoded(qstat: str, designation: str, meaning: str) -> None:
    decoded = decode_results(pd.DataFrame({"RecordId": ["1", "2"], "QSTAT": [qstat, "1"]}, dtype=object))
    assert decoded.loc[0, "QSTAT_Designation"] == designation
    assert decoded.loc[0, "QSTAT_Meaning"] == meaning


@pytest.mark.parametrize("position", range(1, 25))
def test_each_short_report_position_gets_its_own_column(position: int) -> None:
    report = "-" * (position - 1) + "3" + "-" * (24 - position)
    decoded = decode_short_report(pd.Series([report]))
    name = f"SR{position:02d}_{SHORT_REPORT_POSITIONS[position - 1]}"
    assert decoded.loc[0, name] == "changed (3)"
    others = decoded.drop(columns=name).iloc[0].tolist()
    assert others == ["no statement (-)"] * 23


@pytest.mark.parametrize(
    ("char", "text"),
    [
        ("-", "no statement (-)"),
        ("1", "compliance (1)"),
        ("2", "hit with discrepancy (2)"),
        ("3", "changed (3)"),
        ("4", "supplemented (4)"),
        ("5", "new information (5)"),
        ("6", "blocked forwarding information (6)"),
        ("9", "deleted (9)"),
        ("0", "no hit (0)"),
        ("A", "special (A)"),
        ("H", "special (H)"),
        ("Z", "special (Z)"),
        ("7", "unknown (7)"),
        ("€", "unknown (€)"),
        (" ", ""),
    ],
)
def test_each_short_report_character_is_decoded(char: str, text: str) -> None:
    decoded = decode_short_report(pd.Series([char * 24, "1" * 24]))
    assert decoded.iloc[0].tolist() == [text] * 24
    assert decoded.iloc[1].tolist() == ["compliance (1)"] * 24


def test_short_or_missing_short_reports_leave_positions_empty() -> None:
    decoded = decode_short_report(pd.Series(["13", "", None, "1" * 30], index=[10, 11, 12, 13]))
    assert list(decoded.index) == [10, 11, 12, 13]
    assert decoded.loc[10].tolist()[:3] == ["compliance (1)", "changed (3)", ""]
    assert decoded.loc[11].tolist() == [""] * 24
    assert decoded.loc[12].tolist() == [""] * 24
    assert decoded.loc[13].tolist() == ["compliance (1)"] * 24  # positions past 24 are not defined


def test_decoding_many_rows_works_per_distinct_value() -> None:
    # A self-check of the vectorised path (timing is measured outside the unit tests).
    rows = 200_000
    rng = np.random.default_rng(7)
    reports = np.array(["".join(r) for r in rng.choice(list("-01234569AH"), (500, 24))])[
        rng.integers(0, 500, rows)
    ]
    qstats = rng.choice(["1", "2", "3", "51", "K", "F", "99"], rows)
    frame = pd.DataFrame(
        {"QSTAT": qstats, "ShortReport": reports, "TotalScore": "100.00", "CorrectionType": "0"}, dtype=object
    )
    decoded = decode_results(frame)
    sample = rng.integers(0, rows, 50)
    for row in sample:
        assert decoded.iloc[row]["SR08_StreetName"].endswith(f"({reports[row][7]})")
        assert decoded.iloc[row]["SR24_AddressStatus"].endswith(f"({reports[row][23]})")
    assert (decoded["QSTAT_Designation"] == "Unknown QSTAT").sum() == (qstats == "99").sum()
    assert decoded["TotalScore"].eq(100.0).all()


def test_merge_keeps_every_input_row_in_order(tmp_path: Path) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    shuffled = decoded.iloc[[2, 0, 1]]  # out of order
    merged = merge_results(records, shuffled)
    assert merged["RecordId"].tolist() == [1, 2, 3, 4]
    assert merged["Kundennummer"].tolist() == ["007", "008", "009", "010"]
    assert merged["ReturnedByService"].tolist() == [True, True, True, False]
    assert merged["QSTAT"].tolist() == ["1", "51", "K", ""]
    assert list(merged.columns[:4]) == ["RecordId", "Kundennummer", "ReturnedByService", "QSTAT"]
    assert "Streetname_uploaded" not in merged
    assert merged.loc[0, "Streetname"] == "Bahnhofstrasse"
    assert merged.loc[0, "Streetname_in"] == "Bahnhofstr."
    assert merged.loc[3, "Name_in"] == "Lang"
    assert pd.isna(merged.loc[3, "TotalScore"])


def test_merge_warns_about_result_rows_no_input_row_has(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    stray = decoded.iloc[[0]].assign(RecordId="99")
    with caplog.at_level("WARNING", logger="postflows.address_service.results"):
        merged = merge_results(records, pd.concat([decoded, stray], ignore_index=True))
    assert merged["RecordId"].tolist() == [1, 2, 3, 4]
    assert "1 result rows carry a RecordId that no accepted input row has" in caplog.text


def test_merge_by_an_alignments_own_id_name_with_a_row_missing_and_one_unknown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    renamed = decoded.rename(columns={"RecordId": "KDNR"})
    stray = renamed.iloc[[0]].assign(KDNR="99")
    with caplog.at_level("WARNING", logger="postflows.address_service.results"):
        merged = merge_results(records, pd.concat([renamed.iloc[[0, 1]], stray]), record_id="KDNR")
    assert merged["RecordId"].tolist() == [1, 2, 3, 4]
    assert merged["ReturnedByService"].tolist() == [True, True, False, False]  # 3 and 4 did not come back
    assert merged["QSTAT_Designation"].tolist()[2:] == ["not returned", "not returned"]
    assert merged["QSTAT_Designation"].tolist()[0] != "not returned"
    assert "1 result rows carry a RecordId that no accepted input row has" in caplog.text
    with pytest.raises(ResultFileError, match="result has no KDNR column"):
        merge_results(records, decoded, record_id="KDNR")


def test_result_without_a_row_of_the_upload_is_an_error(tmp_path: Path) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    foreign = decoded.assign(RecordId=["71", "72", "x"])
    with pytest.raises(ResultFileError, match="no result row matches the uploaded record ids"):
        merge_results(records, foreign)
    with pytest.raises(ResultFileError) as caught:
        merge_results(records, foreign, source=tmp_path / "r.txt")
    assert caught.value.path == tmp_path / "r.txt"
    header_only = decode_results(read_result_file(write_result(tmp_path / "h.txt", "cp1252", rows=[])))
    with pytest.raises(ResultFileError, match="no result row matches"):
        merge_results(records, header_only)


def test_qstat_summary(tmp_path: Path) -> None:
    frame = pd.DataFrame({"QSTAT": ["51", "1", "01", "K", "77", "", "1", "F"]}, dtype=object)
    summary = qstat_summary(frame)
    assert list(summary.columns) == ["QSTAT", "Designation", "Meaning", "Count", "Share %"]
    assert summary["QSTAT"].tolist() == ["1", "51", "K", "F", "77", ""]
    assert summary["Count"].tolist() == [3, 1, 1, 1, 1, 1]
    assert summary["Share %"].tolist() == [37.5, 12.5, 12.5, 12.5, 12.5, 12.5]
    assert summary.loc[0, "Designation"] == "Person hit"
    assert summary.loc[4, "Designation"] == "Unknown QSTAT"
    assert summary.loc[5, "Designation"] == "(no status)"


def test_unpack_plain_result_file(tmp_path: Path) -> None:
    plain = write_result(tmp_path / "download.bin", "cp1252")
    files = unpack_download(plain, tmp_path / "work")
    assert files.result == plain
    assert files.moves is None


def test_unpack_zip_with_result_and_moves(tmp_path: Path) -> None:
    archive = tmp_path / "download.bin"  # recognised by content, not by name
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("out/Result_20240101.txt", "RecordId\tQSTAT\r\n1\t1\r\n")
        bundle.writestr("out/Moves_20240101.txt", "Name\tPLZ\r\nMeier\t3000\r\n")
    files = unpack_download(archive, tmp_path / "work")
    assert files.result == tmp_path / "work" / "result.txt"  # names of ours, not the archive's
    assert files.moves == tmp_path / "work" / "moves.txt"
    assert files.moves.read_bytes() == b"Name\tPLZ\r\nMeier\t3000\r\n"
    assert read_result_file(files.result)["QSTAT"].tolist() == ["1"]
    only_result = tmp_path / "only.zip"
    with zipfile.ZipFile(only_result, "w") as bundle:
        bundle.writestr("result.txt", "RecordId\tQSTAT\r\n")
    assert unpack_download(only_result, tmp_path / "w2").moves is None


def test_unusable_zip_downloads(tmp_path: Path) -> None:
    moves_only = tmp_path / "moves_only.zip"
    with zipfile.ZipFile(moves_only, "w") as bundle:
        bundle.writestr("moves.txt", "x")
    with pytest.raises(ResultFileError, match="holds no result file"):
        unpack_download(moves_only, tmp_path / "work")
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(ResultFileError, match="damaged ZIP"):
        unpack_download(damaged, tmp_path / "work")


def zip_bomb(path: Path, inflated: int, name: str = "result.txt") -> Path:
    """A ZIP holding ``inflated`` bytes of one repeated line: about a thousandfold compression."""
    line = b"1\t\t\t\t\t\t\t\t\r\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as bundle,
        bundle.open(name, "w", force_zip64=True) as member,
    ):
        member.write(b"RecordId\tQSTAT\r\n")
        for _ in range(inflated // (1 << 20)):
            member.write(line * ((1 << 20) // len(line)))
    return path


def test_zip_bomb_is_refused_by_its_compression_ratio(tmp_path: Path) -> None:
    download = zip_bomb(tmp_path / "download" / "output.bin", 64 << 20)
    assert download.stat().st_size * 500 < 64 << 20
    with pytest.raises(ResultFileError, match=r"100:1, POSTFLOWS_ZIP_MAX_RATIO.*ZIP bomb"):
        unpack_download(download, tmp_path / "download")
    assert [path.name for path in (tmp_path / "download").iterdir()] == ["output.bin"]


def test_zip_ratio_limit_is_a_parameter(tmp_path: Path) -> None:
    download = zip_bomb(tmp_path / "output.bin", 4 << 20)
    files = unpack_download(download, tmp_path / "work", max_ratio=10_000)
    assert files.result.stat().st_size > 4 << 20


def test_zip_content_beyond_the_size_limit_is_refused(tmp_path: Path) -> None:
    download = tmp_path / "output.bin"
    incompressible = np.random.default_rng(7).bytes(300_000)
    with zipfile.ZipFile(download, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("result.txt", b"RecordId\tQSTAT\r\n" + incompressible)
        bundle.writestr("moves.txt", incompressible)
    with pytest.raises(
        ResultFileError, match=r"more than the limit of 500,000 bytes \(POSTFLOWS_DOWNLOAD_MAX_BYTES\)"
    ):
        unpack_download(download, tmp_path / "work", max_bytes=500_000)
    assert not (tmp_path / "work").exists() or list((tmp_path / "work").iterdir()) == []


def test_inflated_bytes_are_counted_whatever_the_headers_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    download = zip_bomb(tmp_path / "output.bin", 3 << 20)
    # Were the headers' sizes wrong, only the bytes counted while inflating could stop it.
    monkeypatch.setattr(ZipInflation, "check_headers", lambda self, members: None)
    with pytest.raises(ResultFileError, match="2,000,000 bytes"):
        unpack_download(download, tmp_path / "work", max_bytes=2_000_000, max_ratio=1e9)
    with pytest.raises(ResultFileError, match="ZIP bomb"):
        unpack_download(download, tmp_path / "work")
    assert list((tmp_path / "work").iterdir()) == []


def test_zip_members_never_write_under_their_own_names(tmp_path: Path) -> None:
    workdir = tmp_path / "download"
    download = workdir / "output.bin"
    workdir.mkdir()
    with zipfile.ZipFile(download, "w") as bundle:
        bundle.writestr("output.bin", "RecordId\tQSTAT\r\n1\t1\r\n")  # named like the download itself
        bundle.writestr("../../moves.txt", "Name\tPLZ\r\nMeier\t3000\r\n")
    archive = download.read_bytes()
    files = unpack_download(download, workdir)
    assert download.read_bytes() == archive
    assert (files.result, files.moves) == (workdir / "result.txt", workdir / "moves.txt")
    assert files.result.read_bytes() == b"RecordId\tQSTAT\r\n1\t1\r\n"
    assert sorted(path.name for path in tmp_path.rglob("*")) == [
        "download",
        "moves.txt",
        "output.bin",
        "result.txt",
    ]


def test_a_download_named_like_an_unpacked_file_is_not_overwritten(tmp_path: Path) -> None:
    download = tmp_path / "result.txt"
    with zipfile.ZipFile(download, "w") as bundle:
        bundle.writestr("x.txt", "RecordId\tQSTAT\r\n1\t1\r\n")
    archive = download.read_bytes()
    files = unpack_download(download, tmp_path)
    assert download.read_bytes() == archive and files.result == tmp_path / "unpacked-result.txt"


def test_moves_file_with_header_ragged_rows_and_windows_1252(tmp_path: Path) -> None:
    path = tmp_path / "moves.txt"
    path.write_bytes(
        "Name;Vorname;PLZ alt;Ort alt;PLZ neu\r\nMüller;Jürg;3000;Bern;8001\r\nKeller;Anna;3000\r\n".encode(
            "cp1252"
        )
    )
    moves = read_moves_file(path)
    assert list(moves.columns) == ["Name", "Vorname", "PLZ alt", "Ort alt", "PLZ neu"]
    assert moves.to_numpy().tolist() == [
        ["Müller", "Jürg", "3000", "Bern", "8001"],
        ["Keller", "Anna", "3000", "", ""],
    ]


def test_moves_file_without_header(tmp_path: Path) -> None:
    path = tmp_path / "moves.txt"
    path.write_text("Meier\tEva\tWeg 1\t19800101\t3000\tBern\nKurz\tOtto\n", encoding="utf-8")
    moves = read_moves_file(path)
    assert list(moves.columns) == [f"Column{n}" for n in range(1, 7)]
    assert moves.loc[0, "Column4"] == "19800101"
    assert moves.loc[1].tolist() == ["Kurz", "Otto", "", "", "", ""]
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert read_moves_file(empty).empty


def test_write_address_results(tmp_path: Path) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    merged = merge_results(records, decoded)
    moves = pd.DataFrame({"Name": ["Müller"], "PLZ neu": ["8001"]})
    paths = write_address_results(
        user_results(merged, records), qstat_summary(merged), tmp_path / "out", moves=moves
    )
    assert [path.name for path in paths] == ["results.csv", "results.xlsx", "moves.csv"]
    csv = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert csv["Kundennummer"].tolist() == ["007", "008", "009", "010"]
    assert csv.columns[:3].tolist() == ["Kundennummer", "line", "row"]
    assert (csv.loc[0, "Nachname"], csv.loc[0, "Nachname (Post)"]) == ("Müller", "Müller")
    assert (csv.loc[0, "Strasse"], csv.loc[0, "Strasse (Post)"]) == ("Bahnhofstr.", "Bahnhofstrasse")
    workbook = openpyxl.load_workbook(tmp_path / "out" / "results.xlsx")
    assert workbook.sheetnames == [
        "Results", "Legend", "QSTAT summary", "Moves", "Rows by QSTAT class", "Corrections by kind",
        "Moves by kind",
    ]  # fmt: skip
    results = workbook["Results"]
    assert results.freeze_panes == "A2"
    assert results.auto_filter.ref is not None
    assert results["A1"].font.b is True
    assert results["A2"].value == "007"
    assert results["B2"].value == 2 and results["C2"].value == 1
    summary = workbook["QSTAT summary"]
    assert [cell.value for cell in summary[1]] == ["QSTAT", "Designation", "Meaning", "Count", "Share %"]
    assert summary["D2"].value == 1 and summary["E2"].value == 25.0


def test_results_csv_neutralises_formulas_in_text_but_not_in_codes(tmp_path: Path) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    merged = merge_results(records, decoded)
    merged.loc[0, "Kundennummer"] = '=HYPERLINK("http://x","klick")'  # from the customer's file
    merged.loc[1, "Name"] = "@SUM(1+1)"  # the service's address text
    records.given.loc[3, "Strasse"] = "+41 79 000 00 00"  # the customer's address cell
    moves = pd.DataFrame({"Name": ["-Müller"], "PLZ neu": ["8001"]})
    write_address_results(user_results(merged, records), qstat_summary(merged), tmp_path / "out", moves=moves)
    csv = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert csv.loc[0, "Kundennummer"] == '\'=HYPERLINK("http://x","klick")'
    assert csv.loc[1, "Nachname (Post)"] == "'@SUM(1+1)"
    assert csv.loc[2, "Strasse"] == "'+41 79 000 00 00"
    assert csv.loc[0, "SR01_Company"] == "no statement (-)"  # a decoded code starts with its label
    assert csv.loc[1, "Kundennummer"] == "008" and csv.loc[0, "QSTAT"] == "1"
    assert csv.loc[0, "TotalScore"] == "100.0"
    moved = read_output_csv(tmp_path / "out" / "moves.csv", dtype=str, keep_default_na=False)
    assert moved.loc[0, "Name"] == "'-Müller"
    workbook = openpyxl.load_workbook(tmp_path / "out" / "results.xlsx")
    assert workbook["Results"]["A2"].value == '=HYPERLINK("http://x","klick")'  # text cells, never formulas
    assert workbook["Results"]["A2"].data_type == "s"

    write_address_results(
        user_results(merged, records), qstat_summary(merged), tmp_path / "plain", csv_style=UNGUARDED
    )
    plain = read_output_csv(tmp_path / "plain" / "results.csv", dtype=str, keep_default_na=False)
    assert plain.loc[0, "Kundennummer"] == '=HYPERLINK("http://x","klick")'
    assert plain.loc[1, "Nachname (Post)"] == "@SUM(1+1)"


def _formula_result_rows() -> list[str]:
    """Result rows whose service fields start like formulas (and one ShortReport that is no report)."""
    fields = "\t".join(["Jürg", "Müller", "Bahnhofstr.", "12", "3000", "Bern"])
    return [
        f"1\t007\t{fields}\t1\t--11---3311-1----------A\t1\t100.00\t=1+1\t@SUM(A1)\t"
        '=HYPERLINK("http://evil.example/x","open")\t\tJürg\tMüller\tBahnhofstrasse\t12\t3000\tBern\t\t+1',
        f"2\t008\t{fields}\t51\t-=1+1\t0\t94.50\t\t\t\t\t\t\t\t\t\t\t\t-1",
    ]


def test_service_fields_that_start_like_formulas_are_guarded_codes_included(tmp_path: Path) -> None:
    header = RESULT_HEADER + "\tDouble_DSTAT"
    path = write_result(tmp_path / "r.txt", "utf-8", header=header, rows=_formula_result_rows())
    records = address_input(tmp_path)
    merged = merge_results(records, decode_results(read_result_file(path)))
    write_address_results(user_results(merged, records), qstat_summary(merged), tmp_path / "out")
    csv = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert csv.loc[0, "ValidFrom"] == "'=1+1"
    assert csv.loc[0, "Birthdate"] == "'@SUM(A1)"
    assert csv.loc[0, "Housekey"] == '\'=HYPERLINK("http://evil.example/x","open")'
    assert csv.loc[0, "Double_DSTAT"] == "'+1" and csv.loc[1, "Double_DSTAT"] == "'-1"
    # Codes are guarded like any other text (a spreadsheet computes -1-1); their labels never need it.
    assert csv.loc[0, "QSTAT"] == "1" and csv.loc[1, "QSTAT"] == "51"
    assert csv.loc[0, "ShortReport"] == "'--11---3311-1----------A"
    assert csv.loc[0, "SR01_Company"] == "no statement (-)"
    assert csv.loc[1, "ShortReport"] == "'-=1+1"
    assert csv.loc[1, "SR02_Prename"] == "unknown (=)"


def test_service_fields_longer_than_the_specification_are_flagged(tmp_path: Path) -> None:
    rows = [
        "1\t007\tJürg\tMüller\tBahnhofstr.\t12\t3000\tBern\t1\t-1-1---3311-1----------A\t1\t100.00\t"
        "202401019\t\t12345678901234567890123\t\tJürg\tMüller\tBahnhofstrasse\t12\t30001\tBern\t",
        "2\t008\tAnna\tKeller\tSeeweg\t3\t8001\tZürich\t51\t0000000000000000000000\t0\t94.50",
    ]
    download = write_result(tmp_path / "r.txt", "utf-8", rows=rows)
    prepared = PreparedInput(records=address_input(tmp_path), rejected_path=None)
    built = build_address_results(prepared, download, tmp_path / "out")
    assert built.long_field_rows == 1
    assert "rows with a field longer than the specification allows: 1" in built.markdown("x", rejected_rows=0)
    csv = read_output_csv(tmp_path / "out" / "results.csv", dtype=str, keep_default_na=False)
    assert list(csv.columns[:3]) == ["Kundennummer", "line", "row"]
    returned = csv.columns.get_loc("ReturnedByService")
    assert csv.columns[returned + 1] == "ResultProblems"
    assert csv.loc[0, "ResultProblems"] == (
        "ValidFrom: 9 characters, at most 8; Housekey: 23 characters, at most 19; "
        "ZIPCode: 5 characters, at most 4"
    )
    assert csv.loc[0, "Housekey"] == "12345678901234567890123"  # kept as the service sent it
    assert csv["ResultProblems"].tolist()[1:] == ["", "", ""]


def test_a_result_with_a_record_id_on_several_rows_is_refused_naming_the_ids(tmp_path: Path) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    twice = decoded.iloc[[0, 1, 2, 0, 2, 2]]
    with pytest.raises(DuplicateRecordIds) as refused:
        merge_results(records, twice, source=tmp_path / "r.txt")
    assert refused.value.ids == (1, 3)
    assert "more than one row for record ids 1, 3" in str(refused.value)
    assert isinstance(refused.value, ResultFileError) and refused.value.exit_code == 1


def read_result_file_from_rows() -> pd.DataFrame:
    frame = pd.DataFrame([row.split("\t") for row in RESULT_ROWS[:1]])
    frame.columns = result_file.result_headers(RESULT_HEADER.split("\t"))
    return frame


def test_a_result_header_repeating_a_name_another_column_has_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "result.txt"
    path.write_bytes(b"RecordId\tA_uploaded.1\tA\tA\tA\n1\tw\tx\ty\tz\n")
    frame = read_result_file(path)
    assert list(frame.columns) == ["RecordId", "A_uploaded.1", "A_uploaded", "A_uploaded.2", "A"]
    assert frame.to_numpy().tolist() == [["1", "w", "x", "y", "z"]]


@pytest.mark.parametrize("odd", ["2.5", "99999999999999999999", "inf", "-inf", "1e400"])
def test_a_record_id_no_upload_can_have_is_a_row_left_out_not_a_crash(
    tmp_path: Path, odd: str, caplog: pytest.LogCaptureFixture
) -> None:
    records = address_input(tmp_path)
    decoded = decode_results(read_result_file(write_result(tmp_path / "r.txt", "cp1252")))
    stray = decoded.iloc[[0]].assign(RecordId=odd)
    with caplog.at_level("WARNING", logger="postflows.address_service.results"):
        merged = merge_results(records, pd.concat([decoded, stray], ignore_index=True))
    assert merged["RecordId"].tolist() == [1, 2, 3, 4]
    assert merged["ReturnedByService"].tolist() == [True, True, True, False]


def test_numbers_too_large_for_a_float_or_an_integer_decode_as_missing() -> None:
    frame = pd.DataFrame(
        {
            "CorrectionType": ["1", "inf", "1e400", "99999999999999999999", "-1e400"],
            "TotalScore": ["99,5", "1e400", "-inf", "7", "x"],
        },
        dtype=object,
    )
    decoded = decode_results(frame)
    assert decoded["CorrectionType"].tolist() == [1, pd.NA, pd.NA, pd.NA, pd.NA]
    assert decoded["TotalScore"].fillna(-1).tolist() == [99.5, -1, -1, 7.0, -1]


def test_a_zip_whose_directory_points_before_the_file_start_is_a_damaged_zip(tmp_path: Path) -> None:
    download = tmp_path / "download.zip"
    with zipfile.ZipFile(download, "w") as bundle:
        bundle.writestr("result.txt", "RecordId\tQSTAT\r\n" + "1\t1\r\n" * 40)
    data = download.read_bytes()
    download.write_bytes(data[:40] + data[120:])  # bytes lost inside the member: every offset is off
    with pytest.raises(ResultFileError, match="damaged ZIP"):
        unpack_download(download, tmp_path / "work")
    assert not (tmp_path / "work" / "result.txt").exists()


def test_a_moves_line_holding_a_form_feed_or_a_line_separator_stays_one_row(tmp_path: Path) -> None:
    path = tmp_path / "moves.txt"
    path.write_text("Name;Alt;Neu\nMuster\x0cHans;3000;8001\nKeller\u2028Eva;3000;\x85\n", encoding="utf-8")
    frame = read_moves_file(path)
    assert frame["Name"].tolist() == ["Muster\x0cHans", "Keller\u2028Eva"]
    assert frame["Neu"].tolist() == ["8001", "\x85"]


# Pieces of result lines: text in and outside Windows-1252, the delimiters, blanks, line ends of both kinds.
_PIECES = [
    "a",
    "Z",
    "1",
    " ",
    "ä",
    "é",
    "€",
    "Œ",
    "ß",
    "\t",
    "\t",
    "\t",
    ";",
    '"',
    "'",
    "=",
    "\r\n",
    "\n",
    "Ł",
]
_HEADERS = [
    "RecordId\tQSTAT\tShortReport\tTotalScore\tCorrectionType\tName\tStreetName",
    "RecordId;QSTAT",
    "X",
]


_READ_PANDAS = result_file.read_with_pandas


def _pandas_read(path: Path) -> pd.DataFrame:
    """The reader the Arrow path stands in for: pandas' C parser, the csv module for rows it refuses."""
    encoding = detect_encoding(path)
    header = path.read_bytes().decode(encoding, errors="replace").splitlines()[0]
    delimiter = "\t" if "\t" in header else sniff_delimiter(header) or "\t"
    names = result_file.result_headers(header.split(delimiter))
    return _READ_PANDAS(path, encoding, delimiter, names)


@pytest.mark.parametrize("pieces", [False, True], ids=["whole", "in-pieces"])
@pytest.mark.parametrize("seed", range(3))
def test_arrow_reader_reads_what_pandas_reads(
    tmp_path: Path, seed: int, pieces: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut: list[int] = []
    if pieces:  # a large file is read in pieces of 4 MB: here of 8 bytes, the buffer grown for longer lines
        monkeypatch.setattr(result_arrow, "_PIECE_BYTES", 8)
        split = result_arrow._line_pieces
        monkeypatch.setattr(
            result_arrow, "_line_pieces", lambda *a: (cut.append(len(p)) or (p, f) for p, f in split(*a))
        )
    rng = random.Random(seed)
    used_pandas = _count_pandas_reads(monkeypatch)
    for case in range(100):
        lines = "".join(rng.choices(_PIECES, k=80)) + rng.choice(["", "\n"])
        text = rng.choice(_HEADERS) + rng.choice(["\r\n", "\n"]) + lines
        encoding = rng.choice(["utf-8", "utf-8-sig", "cp1252"])
        data = text.encode(encoding, errors="replace")
        if rng.random() < 0.2:
            data += b"\x81\x8d\xc3\xa9"  # bytes Windows-1252 lacks, and UTF-8 in a Windows-1252 file
        path = tmp_path / f"r{case}.txt"
        path.write_bytes(data)
        frame = read_result_file(path)
        expected = _pandas_read(path)
        assert list(frame.columns) == list(expected.columns), (case, data)
        assert frame.astype(object).to_numpy().tolist() == expected.to_numpy().tolist(), (case, data)
        assert (frame.dtypes == "str").all()
    assert len(used_pandas) < 40  # most of them went through Arrow
    assert not pieces or len(cut) > 300  # files of several pieces each


def test_arrow_reader_counts_the_fields_of_lines_longer_than_64_kib(tmp_path: Path) -> None:
    # A line's delimiters are summed in 16 bits only where every line of its block is shorter than 64 KiB.
    long_text = "é" * 70_000
    lines = [f"1\t{long_text}\tx", "2", "3\t" + "\t".join(["a"] * 5) + f"\t{long_text}", "4\tb"]
    path = tmp_path / "long.txt"
    path.write_bytes(("RecordId\tName\n" + "\n".join(lines) + "\n").encode("cp1252"))
    frame = read_result_file(path)
    expected = _pandas_read(path)
    assert (
        list(frame.columns)
        == list(expected.columns)
        == ["RecordId", "Name", *(f"Unnamed: {n}" for n in range(3, 8))]
    )
    assert frame.astype(object).to_numpy().tolist() == expected.to_numpy().tolist()
    assert frame.loc[2, "Unnamed: 7"] == long_text


@pytest.mark.parametrize(
    "body",
    [
        "1\t2\r\n   \r\n3\t4\r\n",  # a line of blanks: the C parser skips it
        "1\t2\r3\t4\r\n",  # a lone CR ends a line
        "1\t2\t",  # a delimiter ends the file
        "1\t2\t\t\r\n3\t4\t\r\n",  # the first line one field wider, ending in the delimiter
        "1\t2\t\t5\r\n\r\n3\r\n",  # surplus fields and an empty line
    ],
)
def test_lines_pandas_reads_its_own_way_are_read_as_before(tmp_path: Path, body: str) -> None:
    path = tmp_path / "r.txt"
    path.write_bytes(("RecordId\tQSTAT\tName\r\n" + body).encode("cp1252"))
    frame = read_result_file(path)
    expected = _pandas_read(path)
    assert list(frame.columns) == list(expected.columns)
    assert frame.astype(object).to_numpy().tolist() == expected.to_numpy().tolist()


def test_a_byte_order_mark_starting_a_data_line_is_kept_as_pandas_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"  # two files saved with a BOM each, joined: Arrow would drop the second BOM
    path.write_bytes(b"\xef\xbb\xbfRecordId\tName\r\n\xef\xbb\xbf1\tx\r\n2\ty\r\n")
    frame = read_result_file(path)
    assert frame.astype(object).to_numpy().tolist() == _pandas_read(path).to_numpy().tolist()
    assert frame["RecordId"].tolist() == ["\ufeff1", "2"]


def test_every_windows_1252_byte_is_read_as_python_decodes_it(tmp_path: Path) -> None:
    high = bytes(range(0x80, 0x100)).replace(b"\t", b"")
    path = tmp_path / "r.txt"
    path.write_bytes(b"RecordId\tName\r\n1\t" + high + b"\r\n2\t" + high[::-1] + b"\t" + high[:3] + b"\r\n")
    frame = read_result_file(path)
    assert frame["Name"].tolist() == [
        high.decode("cp1252", errors="replace"),
        high[::-1].decode("cp1252", "replace"),
    ]
    assert frame["Unnamed: 3"].tolist() == ["", high[:3].decode("cp1252", errors="replace")]


@pytest.mark.parametrize("header_end", [b"\rQSTAT\r\n", b"\x00\tQSTAT\r\n"], ids=["lone-CR", "NUL"])
def test_a_header_holding_a_lone_cr_or_a_nul_byte_is_read_as_pandas_reads_it(
    tmp_path: Path, header_end: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    used_pandas = _count_pandas_reads(monkeypatch)
    path = tmp_path / "r.txt"
    path.write_bytes(b"RecordId" + header_end + b"1\tx\r\n2\r\n")
    frame = read_result_file(path)
    expected = _pandas_read(path)
    assert list(frame.columns) == list(expected.columns)
    assert frame.astype(object).to_numpy().tolist() == expected.to_numpy().tolist()
    assert used_pandas == [1]


def _count_pandas_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets an entry each time read_result_file leaves a file to the pandas reader."""
    used: list[int] = []
    monkeypatch.setattr(result_file, "read_with_pandas", lambda *a: used.append(1) or _READ_PANDAS(*a))
    return used


def test_pieces_narrower_than_the_widest_line_get_its_columns_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(result_arrow, "_PIECE_BYTES", 16)  # a piece or two per line
    used_pandas = _count_pandas_reads(monkeypatch)
    path = tmp_path / "r.txt"
    lines = ["1\tä", "2", "3\tö\tx\ty", "4\tü\tz", "5"]
    path.write_bytes(("RecordId\tName\r\n" + "\r\n".join(lines) + "\r\n").encode("cp1252"))
    frame = read_result_file(path)
    assert list(frame.columns) == ["RecordId", "Name", "Unnamed: 3", "Unnamed: 4"]
    assert frame.astype(object).to_numpy().tolist() == _pandas_read(path).to_numpy().tolist()
    assert frame["Unnamed: 4"].tolist() == ["", "", "y", "", ""]
    assert not used_pandas


@pytest.mark.parametrize("fields", [3, 200, 300])  # lines of a few bytes, of 400, of 600
def test_the_delimiters_of_lines_of_any_length_are_counted(tmp_path: Path, fields: int) -> None:
    # Summed in 8 bits where every line of a block is shorter than 256 bytes, else in 16.
    path = tmp_path / "r.txt"
    wide = "\t".join(["a"] * fields)
    path.write_bytes(f"RecordId\tName\r\n1\tx\r\n{wide}\r\n2\r\n".encode("ascii"))
    frame = read_result_file(path)
    assert frame.shape == (3, max(2, fields))
    assert frame.astype(object).to_numpy().tolist() == _pandas_read(path).to_numpy().tolist()


def test_lines_as_wide_as_the_header_in_ascii_are_read_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"  # nothing to pad, nothing to transcode
    path.write_bytes(b"RecordId\tQSTAT\r\n1\t2\r\n3\t4\n")
    frame = read_result_file(path)
    assert frame.astype(object).to_numpy().tolist() == [["1", "2"], ["3", "4"]]


def test_whole_reports_decode_alike_when_a_character_first_occurs_late() -> None:
    """Whole ASCII reports are numbered by the characters of the first reports; one seen only later is
    looked for in all of them."""
    reports = ["1" * 24] * 5000 + ["-" * 23 + "Z", " " * 24]
    arrow = pd.Series(
        pa.chunked_array([reports[:3000], reports[3000:]], pa.large_string()),
        dtype=pd.StringDtype("pyarrow", na_value=np.nan),
    )

    decoded = decode_short_report(arrow)

    pd.testing.assert_frame_equal(decoded, decode_short_report(pd.Series(reports, dtype=object)))
    assert decoded.iloc[5000, 23] == "special (Z)"
    assert decoded.iloc[5001].tolist() == [""] * 24


@pytest.mark.parametrize(
    "last", ["1-3-----2-1-1---------PH", "1-3-----2-1-1---------Pé", "1-3-----2-1-1---------P"]
)
def test_arrow_reports_decode_as_python_strings_do(last: str) -> None:
    """Whole ASCII reports are read straight from Arrow's buffer; a short or accented one takes the general
    way; both decode as the same reports held as Python strings."""
    reports = ["--1-----3-2-1-1-------P1", "1" * 24, "-" * 24, last]
    arrow = pd.Series(reports, dtype=pd.StringDtype("pyarrow", na_value=np.nan))

    decoded = decode_short_report(arrow)

    pd.testing.assert_frame_equal(decoded, decode_short_report(pd.Series(reports, dtype=object)))
