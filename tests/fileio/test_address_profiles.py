"""Alignment profiles: the built-in ones, reading a profile file, and errors that name the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fileio.address_service.profiles import BUILTIN, ProfileError, load_profile
from postflows.cli import app

CUSTOM = """\
key: example_maintenance_v1
upload:
  columns: [CustomID_01_in, Prename_in, Name_in, StreetName_in, HouseNo_in, HouseNoAddition_in,
            ZIPCode_in, TownName_in, PassThrough_01]
  record_id: CustomID_01_in
  encoding: utf-8
  delimiter: "\\t"
  line_ending: "\\r\\n"
result:
  record_id: CustomID
outputs:
  statistics_fr: "{###STATISTICFILE_FR###}"
"""


def test_the_built_in_profiles_are_what_was_agreed() -> None:
    standard = BUILTIN["standard"]
    assert standard.key is None and standard.upload.encoding == "utf-8" and standard.upload.delimiter == "\t"
    assert standard.upload.columns[0] == "CustomID_01_in" and standard.upload.columns[-1] == "PassThrough_10"
    assert standard.fields()["StreetName_in"] == "Streetname" and "PassThrough_01" not in standard.fields()
    legacy = BUILTIN["legacy-de"]
    assert (
        ",".join(legacy.upload.columns)
        == "KDNR (QSTAT),Firma,Vorname,Nachname,c/o,Strasse,Hausnummer,Postfach,PLZ,Ort"
    )
    assert (legacy.upload.encoding, legacy.upload.line_ending) == ("cp1252", "\r\n")
    assert (legacy.upload.record_id, legacy.result_record_id) == ("KDNR (QSTAT)", "KDNR")
    assert legacy.fields() == {
        "Firma": "Company",
        "Vorname": "Prename",
        "Nachname": "Name",
        "c/o": "CoAddress",
        "Strasse": "Streetname",
        "Hausnummer": "HouseNo",
        "Postfach": "PoBoxNo",
        "PLZ": "ZIPCode",
        "Ort": "TownName",
    }


def test_a_profile_file_with_a_renamed_result_id_and_an_extra_output(tmp_path: Path) -> None:
    path = tmp_path / "crm.yaml"
    path.write_text(CUSTOM, encoding="utf-8")
    profile = load_profile(path)
    assert profile.name == "crm" and profile.key == "example_maintenance_v1"
    assert profile.result_record_id == "CustomID" and profile.upload.record_id == "CustomID_01_in"
    assert profile.outputs == {"statistics_fr": "{###STATISTICFILE_FR###}"}
    assert profile.upload.line_ending == "\r\n"


def test_the_fingerprint_follows_the_content_not_the_name(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(CUSTOM, encoding="utf-8")
    second.write_text(CUSTOM, encoding="utf-8")
    assert load_profile(first).fingerprint() == load_profile(second).fingerprint()
    second.write_text(CUSTOM.replace("CustomID\n", "KDNR\n"), encoding="utf-8")
    assert load_profile(first).fingerprint() != load_profile(second).fingerprint()


def test_a_shown_profile_reads_back_as_the_same_profile(tmp_path: Path) -> None:
    for name, profile in BUILTIN.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(profile.to_yaml(), encoding="utf-8")
        assert load_profile(path).fingerprint() == profile.fingerprint()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("record_id: CustomID_01_in", "record_id: Kundennummer"),
            "upload.record_id (line 5, column 14): is not one of the columns",
        ),
        (("encoding: utf-8", "encoding: latin-9"), "upload.encoding (line 6, column 13): is not one of"),
        (("{###STATISTICFILE_FR###}", "STATISTICFILE_FR"), "outputs (line 12, column 3): output 1 is not"),
        (
            ("PassThrough_01]", "PassThrough_01, Name_in]"),
            "upload.columns (line 3, column 12): columns 3 and 10 have the same name",
        ),
        (("outputs:", "colour: blue\noutputs:"), "… (line 11, column 1): not a field of this file"),
        (('delimiter: "\\t"', 'delimiter: "ab"'), "delimiter must be one character"),
    ],
)
def test_a_broken_profile_names_the_field_and_the_problem(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(CUSTOM.replace(*change), encoding="utf-8")
    with pytest.raises(ProfileError) as broken:
        load_profile(path)
    assert str(path) in str(broken.value) and message in str(broken.value)
    assert broken.value.exit_code == 2


def test_an_unknown_profile_lists_the_built_in_ones() -> None:
    with pytest.raises(ProfileError, match="standard, legacy-de"):
        load_profile("no-such-profile")


def test_the_profiles_command_lists_and_shows() -> None:
    runner = CliRunner()
    listing = runner.invoke(app, ["profiles"])
    assert listing.exit_code == 0 and "standard" in listing.output and "legacy-de" in listing.output
    shown = runner.invoke(app, ["profiles", "show", "legacy-de"])
    assert shown.exit_code == 0 and "KDNR (QSTAT)" in shown.output and "record_id: KDNR\n" in shown.output
    missing = runner.invoke(app, ["profiles", "show", "no-such-profile"])
    assert missing.exit_code == 2 and "neither a built-in profile" in missing.output
