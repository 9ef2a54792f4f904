"""A module stand-in imports its module on first use and then behaves as the module itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fileio.lazy import lazy_module


def test_imported_on_first_attribute_only() -> None:
    probe = (
        "import sys\n"
        "from fileio.lazy import lazy_module\n"
        "fractions = lazy_module('fractions')\n"
        "before = 'fractions' in sys.modules\n"
        "half = fractions.Fraction(1, 2)\n"
        "print(before, 'fractions' in sys.modules, half)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "1/2"]


def test_patching_through_the_stand_in_patches_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    lazy_json = lazy_module("json")
    monkeypatch.setattr(lazy_json, "dumps", lambda value: "patched")
    assert json.dumps(1) == "patched" and lazy_json.dumps(1) == "patched"
    monkeypatch.undo()
    assert json.dumps(1) == "1"
