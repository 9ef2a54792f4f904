"""The register of guesses: every entry complete, its settings real, its page generated from it."""

from __future__ import annotations

import re
from pathlib import Path

from connectors.guesses import BY_ID, GUESSES, guess
from postflows.reference_pages import guesses_page
from runtime.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
ID = re.compile(r"(address-service|newspaper|commerce|http)\.[a-z0-9]+(-[a-z0-9]+)*")
API_OF_PREFIX = {
    "address-service": "address-service",
    "newspaper": "newspaper",
    "commerce": "commerce",
    "http": "every API",
}


def test_at_least_thirty_guesses_each_with_a_unique_well_formed_id() -> None:
    assert len(GUESSES) >= 30
    assert len(BY_ID) == len(GUESSES), "an id is registered twice"
    for entry in GUESSES:
        assert ID.fullmatch(entry.id), entry.id
        assert API_OF_PREFIX[entry.id.split(".")[0]] == entry.api, entry.id
        assert guess(entry.id) is entry


def test_every_entry_says_what_the_spec_says_what_we_assume_and_what_happens_otherwise() -> None:
    for entry in GUESSES:
        for field in ("spec", "assumption", "otherwise", "other_answer"):
            assert len(getattr(entry, field)) >= 8, f"{entry.id}: {field} is empty"
        assert "§" in entry.spec or "not shown" in entry.spec, f"{entry.id}: the spec's words are missing"


def test_every_setting_named_is_a_setting_or_an_option_of_ours() -> None:
    variables = {variable.name for variable in Settings.variables()}
    cli_reference = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    for entry in GUESSES:
        for name in re.findall(r"POSTFLOWS_[A-Z0-9_]+", entry.setting):
            if name.endswith("_"):  # a family: POSTFLOWS_COMMERCE_SCOPE_*
                assert any(variable.startswith(name) for variable in variables), f"{entry.id}: {name}*"
            else:
                assert name in variables, f"{entry.id}: {name} is not a setting"
        for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", entry.setting):
            assert f"{option} " in cli_reference or f"{option}/" in cli_reference, f"{entry.id}: {option}"


def test_the_guesses_page_lists_every_entry_with_its_words_and_setting() -> None:
    page = guesses_page()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [entry.id for entry in GUESSES]
    for entry, row in zip(GUESSES, rows, strict=True):
        assert entry.spec.replace("|", "\\|") in row
        assert (entry.setting or "none: every shape is read") in row
    assert (ROOT / "docs" / "guesses.md").read_text(encoding="utf-8") == page
    assert "docs/guesses.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "guesses.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_doctor_live_can_observe_the_guesses_it_checks() -> None:
    observable = {entry.id for entry in GUESSES if entry.observable}
    assert {"address-service.ping-body", "address-service.deletefile-302", "commerce.scopes"} <= observable
