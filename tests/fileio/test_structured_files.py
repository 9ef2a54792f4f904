"""A profile, order or parameter file that is not what it should be (a password file named by mistake) is
refused by line, column and field, never quoting what it holds; a file inside the working directory or the
data dir has at most 80 characters of its offending line shown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from core.errors import PostflowsError
from fileio.address_service.profiles import load_profile
from fileio.files import keep_private
from fileio.newspaper.order_input import load_order
from fileio.newspaper.purchase_input import load_purchase_parameters
from fileio.structured_files import EXCERPT_CHARS, STRUCTURED_MAX_BYTES, read_structured

# /etc/shadow's format: YAML reads each line as a key (a line ending in ':'), JSON not at all.
SHADOW = (
    "root:$6$Xy7hQ2Zq$Wc3bT0pLsecrethashAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:19700:0:99999:7:::\n"
    "daemon:*:19700:0:99999:7:::\n"
    "backup: $y$j9T$saltsaltsalt$anotherhashBBBBBBBBBBBBBBBBBBBBBBBB\n"
)
# Pieces of the file that must not appear in a refusal of it.
CONTENT = ("$6$", "Xy7hQ2Zq", "secrethash", "daemon", "19700", "saltsaltsalt", "anotherhash", "backup")
Loader = Callable[[Path], object]
LOADERS: dict[str, tuple[str, Loader]] = {
    "profile": ("shadow.yaml", load_profile),
    "order": ("shadow.json", lambda path: load_order(path, "standard")),
    "JSON parameters": ("shadow.json", load_purchase_parameters),
    "YAML parameters": ("shadow.yaml", load_purchase_parameters),
}


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory outside the working directory and the data dir."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    keep_private(tmp_path / "data")
    outside = tmp_path / "etc"
    outside.mkdir()
    return outside


@pytest.mark.parametrize("kind", LOADERS)
def test_a_password_file_is_refused_without_a_piece_of_it(elsewhere: Path, kind: str) -> None:
    name, load = LOADERS[kind]
    path = elsewhere / name
    path.write_text(SHADOW, encoding="utf-8")
    with pytest.raises(PostflowsError) as refused:
        load(path)
    text = str(refused.value)
    assert str(path) in text and "line 1, column" in text, text
    assert not [piece for piece in CONTENT if piece in text], text
    assert getattr(refused.value, "exit_code", None) == 2


@pytest.mark.parametrize("kind", LOADERS)
def test_a_file_that_does_not_parse_is_named_by_line_and_column_only(elsewhere: Path, kind: str) -> None:
    name, load = LOADERS[kind]
    path = elsewhere / name
    path.write_text('{"title": "Abo",\n  "secret-looking": "hunter2hunter2" ]\n', encoding="utf-8")
    with pytest.raises(PostflowsError) as refused:
        load(path)
    text = str(refused.value)
    assert "line 2, column" in text and "hunter2" not in text and "secret-looking" not in text, text


@pytest.mark.parametrize("kind", LOADERS)
def test_a_file_in_the_working_directory_shows_the_start_of_its_offending_line(
    tmp_path: Path, kind: str
) -> None:
    name, load = LOADERS[kind]
    path = tmp_path / name  # tests run in tmp_path
    long_line = "daemon:*:19700:0:99999:7:::" + "x" * 200
    path.write_text(long_line + "\n", encoding="utf-8")
    with pytest.raises(PostflowsError) as refused:
        load(path)
    text = str(refused.value)
    shown = long_line[: EXCERPT_CHARS - 1] + "…"
    assert f"line 1 reads `{shown}`" in text, text
    assert long_line[: EXCERPT_CHARS + 1] not in text


def test_a_file_in_the_data_dir_shows_its_line_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path.parent)
    data = tmp_path / "data"
    data.mkdir()
    keep_private(data)
    path = data / "profile.yaml"
    path.write_text("upload:\n  columns: [a]\n  record_id: b\n", encoding="utf-8")
    with pytest.raises(
        PostflowsError, match=r"upload.record_id \(line 3, column 14\): is not one of the columns"
    ):
        load_profile(path)
    with pytest.raises(PostflowsError, match="line 3 reads `  record_id: b`"):
        load_profile(path)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999999", "7" * 5000, '"\\ud800"'])
@pytest.mark.parametrize("kind", ["order", "JSON parameters"])
def test_a_value_json_does_not_define_is_refused_when_read_by_line_and_column(
    elsewhere: Path, kind: str, value: str
) -> None:
    name, load = LOADERS[kind]
    path = elsewhere / name
    path.write_text('{"title": "Abo",\n  "copies": ' + value + "}\n", encoding="utf-8")
    with pytest.raises(PostflowsError) as refused:
        load(path)
    text = str(refused.value)
    assert "line 2, column 13: not usable JSON (" in text, text
    assert getattr(refused.value, "exit_code", None) == 2


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (".nan", "NaN is not a number"),
        (".NaN", "NaN is not a number"),
        (".inf", "infinity is not a number"),
        ("-.Inf", "infinity is not a number"),
        ("+.INF", "infinity is not a number"),
        ("!!float nan", "NaN is not a number"),
        ("1.0e+999999", "a number out of the range of a double-precision float"),
        ("7" * 5000, "a number of 5,000 digits, more than 4,300"),
    ],
)
@pytest.mark.parametrize("kind", ["profile", "YAML parameters"])
def test_a_yaml_number_json_would_refuse_is_refused_when_read_by_line_and_column(
    elsewhere: Path, kind: str, value: str, problem: str
) -> None:
    name, load = LOADERS[kind]
    path = elsewhere / name
    path.write_text(f"title: Abo\nextra:\n  - [1, {{copies: {value}}}]\n", encoding="utf-8")
    with pytest.raises(PostflowsError) as refused:
        load(path)
    text = str(refused.value)
    assert f"line 3, column 18: not usable YAML ({problem})" in text, text
    assert getattr(refused.value, "exit_code", None) == 2


def test_yaml_numbers_that_are_numbers_and_strings_that_look_like_them_are_read(tmp_path: Path) -> None:
    path = tmp_path / "fine.yaml"
    path.write_text('a: 1.5e+3\nb: ".nan"\nc: 190:20:30.15\nd: &x 12\ne: *x\nf: 0x1F\n', encoding="utf-8")
    assert read_structured(path, "yaml").data == {
        "a": 1500.0,
        "b": ".nan",
        "c": 685230.15,
        "d": 12,
        "e": 12,
        "f": 31,
    }


def test_a_structured_file_is_read_no_further_than_its_bound(tmp_path: Path) -> None:
    from fileio.files import ReadTooLarge

    path = tmp_path / "huge.yaml"
    path.write_bytes(b"a: b\n" + b"#" * STRUCTURED_MAX_BYTES)
    with pytest.raises(ReadTooLarge, match="more than the limit of 1,048,576 bytes; not read"):
        read_structured(path, "yaml")
