"""The README's Performance table is generated from a results file: one row per benchmark it holds,
whatever their names, and only the text between the markers changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import readme
from bench.__main__ import main

SAMPLE = {
    "generated_at": "2026-11-23T21:00:00+00:00",
    "machine": {"python": "3.11.7", "platform": "Linux", "cpus": 2},
    "wall_s": 754.2,
    "quick": False,
    "benchmarks": {
        "upload_file": {
            "name": "upload_file",
            "description": "write_upload_file vs DataFrame.to_csv(sep='|')",
            "size": {"rows": 1000000, "columns": 11},
            "candidate_median_s": 1.23456,
            "baseline_median_s": 3.5,
            "value": 0.3527,
            "value_label": "candidate/baseline",
            "target": 0.5,
            "comparison": "at_most",
            "passed": True,
            "wall_s": 30.1,
        },
        "some_new_benchmark": {
            "name": "some_new_benchmark",
            "description": "anything another benchmark measures",
            "size": {"queries": 10000},
            "candidate_median_s": 101.0,
            "baseline_median_s": None,
            "value": 24.5,
            "value_label": "speed-up baseline/candidate",
            "target": 25.0,
            "comparison": "at_least",
            "passed": False,
            "wall_s": 300.0,
        },
    },
}
README = f"""# Project

Intro text.

### Performance

Words before the table.

{readme.BEGIN}
| old | table |
|---|---|
| stale | row |
{readme.END}

## Layout

Words after the table.
"""


def _files(tmp_path: Path) -> tuple[Path, Path]:
    results = tmp_path / "results.json"
    results.write_text(json.dumps(SAMPLE), encoding="utf-8")
    readme_path = tmp_path / "README.md"
    readme_path.write_text(README, encoding="utf-8")
    return results, readme_path


def _table_rows(text: str) -> list[list[str]]:
    section = text.split(readme.BEGIN)[1].split(readme.END)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in rows]


def test_the_section_between_the_markers_is_generated_from_the_results(tmp_path: Path) -> None:
    results, readme_path = _files(tmp_path)
    readme.update_readme(results, readme_path)
    text = readme_path.read_text(encoding="utf-8")

    assert "stale" not in text
    before, after = README.split(readme.BEGIN)[0], README.split(readme.END)[1]
    assert text.startswith(before) and text.endswith(after)  # nothing outside the markers changed
    header, *rows = _table_rows(text)
    assert header == list(readme.HEADINGS)
    assert [row[0] for row in rows] == ["upload_file", "some_new_benchmark"]
    upload, new = rows
    assert upload[1] == "write_upload_file vs DataFrame.to_csv(sep='\\|') (rows=1,000,000, columns=11)"
    assert upload[2:] == ["1.235", "3.500", "0.3527 candidate/baseline", "≤ 0.5", "yes"]
    assert new[2:] == ["101.000", "-", "24.5 speed-up baseline/candidate", "≥ 25", "**no**"]
    assert "12.6 min (754 s)" in text  # the whole run's wall time


def test_rewriting_twice_gives_the_same_readme(tmp_path: Path) -> None:
    results, readme_path = _files(tmp_path)
    readme.update_readme(results, readme_path)
    once = readme_path.read_text(encoding="utf-8")
    readme.update_readme(results, readme_path)
    assert readme_path.read_text(encoding="utf-8") == once


def test_quick_results_say_so(tmp_path: Path) -> None:
    section = readme.performance_section({**SAMPLE, "quick": True})
    assert "**quick** sizes" in section


@pytest.mark.parametrize(
    "text",
    ["no markers at all\n", f"{readme.BEGIN}\n", f"{readme.END}\n{readme.BEGIN}\n", README + readme.BEGIN],
)
def test_a_readme_without_one_pair_of_markers_is_refused(text: str) -> None:
    with pytest.raises(readme.ReadmeError, match="bench:performance"):
        readme.rewrite(text, "table")


def test_command_line_rewrites_the_readme_and_runs_nothing(tmp_path: Path) -> None:
    results, readme_path = _files(tmp_path)
    assert main(["--readme", str(readme_path), "--out", str(results)]) == 0
    assert [row[0] for row in _table_rows(readme_path.read_text(encoding="utf-8"))[1:]] == [
        "upload_file",
        "some_new_benchmark",
    ]
    assert json.loads(results.read_text(encoding="utf-8")) == SAMPLE  # the results file is only read


def test_command_line_says_when_the_results_cannot_be_read(tmp_path: Path) -> None:
    _, readme_path = _files(tmp_path)
    assert main(["--readme", str(readme_path), "--out", str(tmp_path / "missing.json")]) == 2
    assert readme_path.read_text(encoding="utf-8") == README


def test_the_performance_page_has_the_section() -> None:
    text = Path(__file__).resolve().parents[2].joinpath("docs", "performance.md").read_text(encoding="utf-8")
    assert text.count(readme.BEGIN) == text.count(readme.END) == 1
