"""The request bodies a user supplies as JSON: one object, an array of objects or JSON lines, passed on as
they are; bounded in size, depth and count, and a file that cannot be used refused naming where and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from fileio.commerce.json_bodies import read_json_bodies
from fileio.errors import InputError


def write(tmp_path: Path, text: str, name: str = "bodies.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_one_object_is_one_body(tmp_path: Path) -> None:
    path = write(tmp_path, '\ufeff{"a": 1, "nested": {"b": [1, null]}}')
    [body] = read_json_bodies(path)
    assert (body.position, body.line, body.body) == (1, 1, {"a": 1, "nested": {"b": [1, None]}})


def test_an_array_gives_each_object_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, '[\n  {"a": 1},\n\n  {"a": 1}, {"b": 2}\n]\n')
    bodies = read_json_bodies(path)
    assert [(body.position, body.line, body.body) for body in bodies] == [
        (1, 2, {"a": 1}),
        (2, 4, {"a": 1}),  # the same body twice is two bodies
        (3, 4, {"b": 2}),
    ]


def test_json_lines_give_each_object_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{"a": 1}\n\n{"b": 2}\n', name="bodies.jsonl")
    assert [(body.line, body.body) for body in read_json_bodies(path)] == [(1, {"a": 1}), (3, {"b": 2})]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[{"a": 1}, 3]', r"line 1, column 12: label request 2 must be a JSON object, not a number"),
        ('{"a": 1}\n["x"]\n', r"line 2, column 1: label request 2 must be a JSON object, not an array"),
        ('{"a": 1,\n "b": }', r"line 2, column 7: not JSON \(Expecting value\)"),
        ('[{"a": 1} {"b": 2}]', r"line 1, column 11: not JSON \(expecting ',' or ']'"),
        ('[{"a": 1}] x', r"line 1, column 12: not JSON \(something follows the array\)"),
        ("[]", r"holds no label request"),
        ("  \n", r"holds no label request"),
    ],
)
def test_a_file_that_cannot_be_used_is_refused_naming_where_and_why(
    tmp_path: Path, text: str, problem: str
) -> None:
    with pytest.raises(InputError, match=problem):
        read_json_bodies(write(tmp_path, text), what="label request")


def test_a_line_is_quoted_only_from_a_file_that_may_be_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, '{"password": "hunter2",\n "b": }')
    with pytest.raises(InputError, match="reads") as inside:
        read_json_bodies(path)
    assert '"b": }' in str(inside.value)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(InputError) as outside:
        read_json_bodies(path)
    assert "hunter2" not in str(outside.value) and "reads" not in str(outside.value)


def test_limits_are_judged_before_the_bodies_are_parsed(tmp_path: Path) -> None:
    big = write(tmp_path, '{"a": "' + "x" * 100 + '"}', name="big.json")
    with pytest.raises(InputError, match="more than the limit of 50 bytes; not read"):
        read_json_bodies(big, max_bytes=50)
    deep = write(tmp_path, "[" * 10 + "]" * 10, name="deep.json")
    with pytest.raises(InputError, match="deeper than 5 levels"):
        read_json_bodies(deep, max_depth=5)
    many = write(tmp_path, "{}\n" * 4, name="many.jsonl")
    with pytest.raises(InputError, match="line 4, column 1: more than 3 bodies"):
        read_json_bodies(many, max_bodies=3)


def test_a_missing_or_binary_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_json_bodies(tmp_path / "none.json")
    binary = tmp_path / "latin.json"
    binary.write_bytes('{"a": "Zürich"}'.encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        read_json_bodies(binary)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("NaN", r"line 3, column 14: not usable JSON \(NaN is not a JSON number\)"),
        ("-Infinity", r"line 3, column 14: not usable JSON \(Infinity is not a JSON number\)"),
        ("1e999999", r"line 3, column 14: not usable JSON \(a number out of the range of a double"),
        ("1" * 5000, r"line 3, column 14: not usable JSON \(a number of 5,000 digits, more than 4,300\)"),
        ('"\\ud800"', r"line 3, column 14: not usable JSON \(a string with a lone surrogate"),
    ],
)
def test_a_value_json_does_not_define_is_refused_when_read_naming_its_line(
    tmp_path: Path, value: str, problem: str
) -> None:
    path = write(tmp_path, '[\n  {"a": 1},\n  {"weight": ' + value + "}\n]\n")
    with pytest.raises(InputError, match=problem) as refused:
        read_json_bodies(path, what="label request")
    assert refused.value.exit_code == 2


def test_a_pair_of_surrogates_and_look_alikes_in_strings_are_read(tmp_path: Path) -> None:
    path = write(tmp_path, '{"s": "\\ud83d\\ude00", "NaN": "Infinity 1e999999", "n": 1.5e300, "i": -12}')
    [body] = read_json_bodies(path)
    assert body.body == {"s": "\U0001f600", "NaN": "Infinity 1e999999", "n": 1.5e300, "i": -12}
