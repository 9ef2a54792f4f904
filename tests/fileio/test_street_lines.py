"""Splitting street lines into street and house number: the forms that are always split, those refused, and
the corpus of Swiss street lines (tests/data/street-lines.csv) with its figures: zero wrong splits."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from fileio.street_lines import StreetLine, split_street_line

CORPUS = Path(__file__).resolve().parents[1] / "data" / "street-lines.csv"


@pytest.mark.parametrize(
    ("line", "street", "house_no"),
    [
        ("Bahnhofstr. 1a", "Bahnhofstr.", "1a"),
        ("Bahnhofstr.1a", "Bahnhofstr.", "1a"),
        ("Rue du Rhône 5", "Rue du Rhône", "5"),
        ("Via Nassa 12", "Via Nassa", "12"),
        ("Rue du 31-Décembre 4", "Rue du 31-Décembre", "4"),
        ("Via San Gottardo 1", "Via San Gottardo", "1"),
        ("Im Ring 3", "Im Ring", "3"),
        ("Lindenstrasse 12 B", "Lindenstrasse", "12 B"),
        ("Chemin des Vignes 3bis", "Chemin des Vignes", "3bis"),
        ("Seestrasse 14-16", "Seestrasse", "14-16"),
        ("Seestrasse 14 - 16", "Seestrasse", "14-16"),
        ("Industriestrasse 7.1", "Industriestrasse", "7.1"),
        ("5, rue du Rhône", "rue du Rhône", "5"),
        ("12 avenue de la Gare", "avenue de la Gare", "12"),
        ("Lindenstrasse12", "Lindenstrasse", "12"),
        ("  Hauptstrasse   8  ", "Hauptstrasse", "8"),
    ],
)
def test_the_usual_forms_are_split(line: str, street: str, house_no: str) -> None:
    split = split_street_line(line)
    assert (split.kind, split.street, split.house_no) == ("street", street, house_no)


@pytest.mark.parametrize(
    ("line", "kind", "term", "number"),
    [
        ("Postfach 123", "po_box", "Postfach", "123"),
        ("Case postale 12", "po_box", "Case postale", "12"),
        ("Casella postale 7", "po_box", "Casella postale", "7"),
        ("Postfach", "po_box", "Postfach", ""),
    ],
)
def test_po_box_lines_are_recognised(line: str, kind: str, term: str, number: str) -> None:
    split = split_street_line(line)
    assert (split.kind, split.po_box_term, split.po_box_no) == (kind, term, number)


@pytest.mark.parametrize(
    "line", ["c/o Muster AG", "C/O Hans Muster", "chez Famille Dubois", "presso Rossi SA"]
)
def test_care_of_lines_are_recognised(line: str) -> None:
    split = split_street_line(line)
    assert split.kind == "care_of" and split.care_of == line


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Dorfstrasse", "no house number"),
        ("Hauptstrasse 12, 3. OG", "text after the house number"),
        ("Via 4 Novembre 12", "second number"),
        ("Seestrasse 23 Postfach 260", "second number"),
        ("Route 66", "street word without a name"),
        ("Via 12", "street word without a name"),
        ("12 B", "no street name"),
        ("", "empty"),
    ],
)
def test_lines_that_cannot_be_split_with_certainty_are_refused_with_a_reason(line: str, reason: str) -> None:
    split = split_street_line(line)
    assert split.kind == "refused" and reason in split.reason


def _agrees(split: StreetLine, row: dict[str, str]) -> bool:
    """A split agrees with the corpus when it is what the line holds; refusing a street line is no error."""
    if split.kind == "street":
        return row["kind"] == "street" and (split.street, split.house_no) == (row["street"], row["house_no"])
    if split.kind == "refused":
        return row["kind"] in ("street", "refused")
    return split.kind == row["kind"] and (split.kind != "po_box" or split.po_box_no == row["po_box_no"])


def test_the_corpus_has_no_wrong_split(capsys: pytest.CaptureFixture[str]) -> None:
    with CORPUS.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    assert len(rows) >= 2000
    outcome: Counter[str] = Counter()
    wrong: list[tuple[str, object]] = []
    for row in rows:
        split = split_street_line(row["line"])
        outcome[split.kind] += 1
        if not _agrees(split, row):
            wrong.append((row["line"], split))
    street_lines = sum(row["kind"] == "street" for row in rows)
    with capsys.disabled():
        print(  # noqa: T201 - the corpus figures the README quotes
            f"\nstreet-line corpus: {len(rows)} lines; {outcome['street']} split "
            f"({outcome['street'] / len(rows):.1%}; {outcome['street'] / street_lines:.1%} of the "
            f"{street_lines} street lines), {outcome['po_box']} P.O. box, {outcome['care_of']} c/o, "
            f"{outcome['refused']} refused ({outcome['refused'] / len(rows):.1%}); {len(wrong)} wrong"
        )
    assert wrong == []
