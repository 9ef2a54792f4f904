"""The generated reference sections: README.md holds what the code's data says, and the rewrite touches only
the text between a section's markers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from postflows import reference

ROOT = Path(__file__).resolve().parents[2]


def test_the_pages_hold_the_generated_sections_as_the_code_writes_them() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    texts = {page: page.read_text(encoding="utf-8") for page in pages}
    for name in reference.SECTIONS:
        assert any(reference.markers(name)[0] in text for text in texts.values()), f"no page holds {name}"
    for page, text in texts.items():
        assert reference.rewrite(text) == text, f"run `python -m postflows.reference` and commit {page}"


def test_the_not_processed_table_names_each_api_and_its_lists() -> None:
    table = reference.not_processed_table()
    rows = table.splitlines()[2:5]
    assert [row.split(" | ")[0] for row in rows] == [
        "| Address web service",
        "| Newspaper API",
        "| Commerce API",
    ]
    address = rows[0]
    not_processed, uncertain = address.split(" | ")[1:3]
    assert "Status 106 AuthenticationUserMaxRequestsReached" in not_processed
    assert "Status 302 DatabaseItemNotFound" in uncertain and "Status 999 UnknownError" in uncertain
    assert "HTTP 403" in rows[2].split(" | ")[1]
    newspaper_uncertain = rows[1].split(" | ")[2]
    assert "code 0004" in newspaper_uncertain and "code 0007" in newspaper_uncertain
    [taken] = [line for line in table.splitlines()[5:] if line]
    assert taken.startswith("Taken although the answer carries errors (Newspaper API): a 2xx answer")


def test_only_the_text_between_the_markers_changes(tmp_path: Path) -> None:
    begin, end = reference.markers("not-processed")
    path = tmp_path / "page.md"
    path.write_text(f"# Title\n\nbefore\n\n{begin}\nstale\n{end}\n\nafter\n", encoding="utf-8")
    assert reference.main([str(path)]) == 0
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\nbefore\n\n" + begin + "\n| API |")
    assert text.endswith(f"\n{end}\n\nafter\n") and "stale" not in text


def test_broken_markers_are_refused() -> None:
    begin, end = reference.markers("not-processed")
    with pytest.raises(reference.ReferenceError):
        reference.rewrite(f"{end}\n{begin}\n")
    with pytest.raises(reference.ReferenceError):
        reference.rewrite(f"{begin}\n{begin}\n{end}\n")


def test_the_limits_table_lists_every_setting_that_bounds_something() -> None:
    from runtime.settings import Settings

    table = reference.limits_table()
    limited = [
        name for name, field in Settings.model_fields.items() if (field.json_schema_extra or {}).get("limit")
    ]  # type: ignore[union-attr]
    assert limited and all(f"`POSTFLOWS_{name.upper()}`" in table for name in limited)
    assert "| `POSTFLOWS_RESPONSE_MAX_BYTES` | 16 MiB |" in table


def test_the_generated_pages_are_as_the_code_writes_them() -> None:
    from postflows.reference_pages import stale_pages

    stale = stale_pages(ROOT / "docs")
    assert not stale, f"run `python -m postflows.reference` and commit: {sorted(stale)}"


def test_every_deployment_has_a_page_with_its_form_fields() -> None:
    from deployments.catalog import CATALOG
    from postflows.reference_pages import flow_pages

    pages = flow_pages()
    assert set(pages) == {f"flows/{spec.name}.md" for spec in CATALOG}
    batch = pages["flows/address-batch.md"]
    assert (
        "| `request.input_path` | Address file | required |" in batch and "`postflows address-batch`" in batch
    )


def test_the_documentation_site_builds_in_strict_mode(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    built = subprocess.run(mkdocs, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr
    site = tmp_path / "site"
    assert (site / "flows" / "address-batch.html").is_file()
    assert (site / "specifications" / "newspaper-api.html").is_file()
    # Opened from disk (file://), a link to a folder shows a listing: every page links to pages as files.
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="flows/address-batch.html"' in index or 'href="flows/address-batch.html#' in index
    assert not re.search(r'href="(?!https?:|#|mailto:)[^"]*/"', index), "a link to a folder"


def test_the_writeback_table_has_a_line_per_answer_of_each_flow() -> None:
    from fileio.writeback_policy import FURTHER_QUALITIES, KEPT

    rows = reference.writeback_table().splitlines()[2:]
    batch = [row for row in rows if row.startswith("| `address-batch`")]
    validation = [row for row in rows if row.startswith("| `address-validation`")]
    assert len(batch) + len(validation) == len(rows)
    assert batch[0].startswith("| `address-batch` | QSTAT 1, 2, 3 with CorrectionType 1: a changed address")
    assert "one of 2, 3, 4 | applied" in batch[0]
    assert all(row.endswith(f"| {KEPT} |") for row in batch[1:3])
    assert "applied with `--apply moves`" in batch[3]
    assert validation[0] == "| `address-validation` | quality CERTIFIED | applied |"
    for quality, row in zip(FURTHER_QUALITIES, validation[1:], strict=False):
        assert row.startswith(
            f"| `address-validation` | quality {quality} | applied with `--apply {quality}`;"
        )
    assert validation[-2] == f"| `address-validation` | any other quality, or none | {KEPT} |"
    for row in (batch[-1], validation[-1]):  # whatever the answer, a value that starts like a formula
        assert "any value that starts with `=`, `+`, `-`, `@`, a tab or a carriage return" in row
        assert row.endswith(f"| {KEPT}: it starts like a formula |")
