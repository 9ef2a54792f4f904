"""Strict JSON text: no NaN or Infinity in anything the project writes, and every JSON writer of the code goes
through :func:`core.json_text.json_text` (the digests, which are never written, say why they do not)."""

from __future__ import annotations

import ast
import math
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.json_text import finite, json_text
from tests.outputs import strict_json
from tests.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
# json.dumps outside json_text, by module and function: text that is hashed or matched, never written.
NOT_WRITTEN = {
    ("core/redaction.py", "spellings"): "the forms a secret takes inside JSON, to find and mask it",
    ("fileio/address_service/profiles.py", "fingerprint"): "a profile's digest",
    ("fileio/checkpoint.py", "request_fingerprint"): "a request's digest",
    ("history/reference/changelog.py", "content_hash"): "a record's digest",
    ("history/identity.py", "fingerprint"): "an endpoint's identity, hashed into idempotency keys",
    ("history/identity.py", "derive_key"): "an idempotency key's digest",
    ("history/identity.py", "body_fingerprint"): "a body's digest",
}
# The sandbox stands in for the services: its answers are theirs, malformed on purpose where a fault says so.
NOT_OURS = ("sandbox",)


def test_numbers_that_are_not_finite_are_null_anywhere() -> None:
    value = {"a": math.nan, "b": [1.5, math.inf, (-math.inf, {"c": math.nan})], "d": "NaN", "e": None}
    text = json_text(value, indent=2, sort_keys=True)
    assert strict_json(text) == {"a": None, "b": [1.5, None, [None, {"c": None}]], "d": "NaN", "e": None}
    assert finite(math.nan) is None and finite(2.0) == 2.0


def test_the_default_may_not_bring_a_nan_back_and_umlauts_stay_unless_ascii_is_asked() -> None:
    value = {"when": date(2026, 11, 29), "ort": "Zürich", "x": object()}
    text = json_text(value, default=lambda item: str(item) if isinstance(item, date) else math.nan)
    assert strict_json(text) == {"when": "2026-11-29", "ort": "Zürich", "x": None}
    assert json_text({"ort": "Zürich"}, ascii_only=True, compact=True) == '{"ort":"Z\\u00fcrich"}'


@given(st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(), _children := (
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
)))  # fmt: skip
def test_any_value_is_written_as_strict_json(value: object) -> None:
    strict_json(json_text(value))


def _json_dumps_calls() -> list[tuple[str, str, int]]:
    """Every call of ``json.dumps`` or ``json.dump`` in the project's packages (the sandbox aside): module,
    enclosing function, line."""
    calls: list[tuple[str, str, int]] = []
    for package in PACKAGES:
        if package in NOT_OURS:
            continue
        for path in sorted((ROOT / package).rglob("*.py")):
            module = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
            for function in [tree, *functions]:
                name = getattr(function, "name", "<module>")
                for node in ast.walk(function):
                    if (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("dumps", "dump")
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "json"
                    ):
                        calls.append((module, name, node.lineno))
    return calls


def test_every_json_writer_goes_through_json_text() -> None:
    calls = _json_dumps_calls()
    innermost: dict[tuple[str, int], str] = {}
    for module, name, line in calls:  # ast.walk visits outer functions first: the last name is the innermost
        innermost[(module, line)] = name
    found = {(module, name) for (module, _), name in innermost.items()}
    stray = sorted(found - NOT_WRITTEN.keys() - {("core/json_text.py", "json_text")})
    assert not stray, f"json.dumps outside core.json_text.json_text: {stray}"
    assert not NOT_WRITTEN.keys() - found, "listed but no longer there: drop it from NOT_WRITTEN"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_the_strict_reader_of_the_tests_refuses_what_json_text_never_writes(constant: str) -> None:
    with pytest.raises(AssertionError, match=constant):
        strict_json(f'{{"x": {constant}}}')
