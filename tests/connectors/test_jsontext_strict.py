"""The strict reading of a JSON input: values JSON does not define, or that cannot be used as given, are
found with their offset; look-alikes inside strings and valid numbers are not."""

from __future__ import annotations

import pytest

from connectors.jsontext import MAX_NUMBER_DIGITS, strict_json_problem, strict_loads


@pytest.mark.parametrize(
    ("text", "offset", "problem"),
    [
        ('{"a": NaN}', 6, "NaN is not a JSON number"),
        ("[1, Infinity]", 4, "Infinity is not a JSON number"),
        ("[1, -Infinity]", 4, "Infinity is not a JSON number"),
        ('{"x": 1e999999}', 6, "a number out of the range of a double-precision float"),
        ("[-1.0E400]", 1, "a number out of the range of a double-precision float"),
        ("[" + "9" * (MAX_NUMBER_DIGITS + 1) + "]", 1, "a number of 4,301 digits, more than 4,300"),
        ('["\\udc00"]', 1, "a string with a lone surrogate"),
        ('{"\\uD800x": 1}', 1, "a string with a lone surrogate"),
    ],
)
def test_what_json_does_not_define_is_found_with_its_offset(text: str, offset: int, problem: str) -> None:
    found = strict_json_problem(text)
    assert found is not None and found[0] == offset and found[1].startswith(problem), found
    with pytest.raises(ValueError, match=problem[:20]):
        strict_loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"NaN": "Infinity", "x": "1e999999 \\" NaN"}',
        '["\\ud83d\\ude00", "\\\\ud800"]',
        "[1e308, -2.5e-400, 0, -0.5]",
        "[" + "9" * MAX_NUMBER_DIGITS + "]",
    ],
)
def test_valid_values_and_look_alikes_in_strings_pass(text: str) -> None:
    assert strict_json_problem(text) is None
    strict_loads(text)
