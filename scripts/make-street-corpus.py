#!/usr/bin/env python3
"""Write tests/data/street-lines.csv: street lines as Swiss CRM exports hold them, each with what it holds.

Every street name of tests/data/swiss-street-names.txt is written in the forms clerks type (abbreviated,
glued to its number, the French and Italian number-first forms, numbers with additions and ranges), and
beside them the lines no rule may split with certainty (no number, text after the number, two numbers, a
street word alone) and P.O. box and c/o lines. The expected columns are known by construction; the same
seed writes the same file.

    scripts/make-street-corpus.py            # rewrite the corpus
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = ROOT / "tests" / "data" / "swiss-street-names.txt"
CORPUS = ROOT / "tests" / "data" / "street-lines.csv"
NUMBERS = ("1", "2", "5", "7", "12", "18", "23", "47", "105", "1a", "2A", "12 B", "3bis", "3 bis", "5ter")
RANGES = ("14-16", "14 - 16", "14/16", "7.1", "22–24")
FIELDS = ("line", "kind", "street", "house_no", "po_box_no")
FR_NUMBER_FIRST_WORDS = ("Rue", "Avenue", "Chemin", "Route", "Place", "Boulevard", "Quai", "Impasse", "Allée")


def tidy(number: str) -> str:
    """The house number as the splitter writes it: dashes unified, no spaces around a range's sign."""
    number = number.replace("–", "-")
    for sign in ("-", "/"):
        number = number.replace(f" {sign} ", sign)
    return number


def abbreviated(street: str) -> str | None:
    for long, short in (("strasse", "str."), ("Strasse", "Str.")):
        if street.endswith(long):
            return street[: -len(long)] + short
    return None


def street_rows(language: str, street: str, rng: random.Random) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []

    def add(line: str, name: str, number: str) -> None:
        rows.append((line, "street", name, tidy(number), ""))

    picks = rng.sample(NUMBERS, 3) + [rng.choice(RANGES)]
    for number in picks:
        add(f"{street} {number}", street, number)
    add(f"{street.upper()} {picks[0]}", street.upper(), picks[0])
    if language == "de":
        short = abbreviated(street)
        if short is not None:
            add(f"{short} {picks[1]}", short, picks[1])
            add(f"{short}{picks[2].replace(' ', '')}", short, picks[2].replace(" ", ""))
        if " " not in street and street[-1].isalpha():
            plain = rng.choice(("3", "12", "44", "8a"))
            add(f"{street}{plain}", street, plain)
        add(f"{street}, {picks[1]}", street, picks[1])
    if language in ("fr", "it"):
        add(f"{picks[0]}, {street}", street, picks[0])
        first = street.split()[0]
        if first in FR_NUMBER_FIRST_WORDS or first in ("Via", "Piazza", "Viale", "Vicolo", "Strada"):
            lower = first.lower() + street[len(first) :]
            add(f"{picks[1]} {lower}", lower, picks[1])
    return rows


def refused_rows(language: str, street: str, rng: random.Random) -> list[tuple[str, ...]]:
    number = rng.choice(NUMBERS)
    lines = [
        street,  # no number
        f"{street} {number}, {rng.choice(('3. OG', '2e étage', 'Hinterhaus', 'Eingang B', 'app. 12'))}",
        f"{street} {rng.randint(1, 99)} {rng.randint(1, 99)}",
    ]
    if rng.random() < 0.3:
        lines.append(f"{street} {number} Postfach {rng.randint(1, 999)}")
    return [(line, "refused", "", "", "") for line in lines]


def special_rows(rng: random.Random) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for term in ("Postfach", "Case postale", "Casella postale", "Postfach", "Case postale", "CP", "PF"):
        for _ in range(8):
            number = str(rng.randint(1, 9999))
            rows.append((f"{term} {number}", "po_box", "", "", number))
    rows += [("Postfach", "po_box", "", "", ""), ("Case postale", "po_box", "", "", "")]
    for holder in ("Muster AG", "Hans Muster", "Famille Dubois", "Rossi SA", "Treuhand Meier GmbH"):
        for word in ("c/o", "C/O", "chez", "presso", "bei"):
            rows.append((f"{word} {holder}", "care_of", "", "", ""))
    for word in ("Strasse", "Rue", "Via", "Weg", "Route", "Chemin", "Piazza", "Platz"):
        for number in ("1", "12", "7a"):
            rows.append((f"{word} {number}", "refused", "", "", ""))
    return rows


def main() -> None:
    rng = random.Random(20261126)
    names = [
        tuple(line.split("|", 1))
        for line in NAMES.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    rows: list[tuple[str, ...]] = []
    for language, street in dict.fromkeys(names):
        rows += street_rows(language, street, rng)
        rows += refused_rows(language, street, rng)
    rows += special_rows(rng)
    unique = list(dict.fromkeys(rows))
    with CORPUS.open("w", encoding="utf-8", newline="") as handle:
        handle.write("# Made by scripts/make-street-corpus.py from tests/data/swiss-street-names.txt.\n")
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(FIELDS)
        writer.writerows(unique)
    print(f"{CORPUS.relative_to(ROOT)}: {len(unique)} lines")  # noqa: T201 - the script's report


if __name__ == "__main__":
    main()
