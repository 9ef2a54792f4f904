#!/usr/bin/env python3
"""Write tests/data/crm-export.csv: a 300-row customer export as a Swiss CRM writes it (UTF-8 with BOM,
semicolons, the house number inside the address column, umlauts), made from the sandbox's postcode
directory and tests/data/swiss-street-names.txt. The same seed writes the same file.

    scripts/make-crm-export.py
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POSTCODES = ROOT / "sandbox" / "address_service" / "data" / "swiss_postcodes.csv"
NAMES = ROOT / "tests" / "data" / "swiss-street-names.txt"
EXPORT = ROOT / "tests" / "data" / "crm-export.csv"
ROWS = 300
FIRST = ("Anna", "Hans", "Lea", "Marco", "Sophie", "Luca", "Mia", "Noah", "Elena", "Jürg", "Käthi", "René")
LAST = ("Müller", "Meier", "Schmid", "Keller", "Weber", "Huber", "Rossi", "Dubois", "Favre", "Bernasconi")
COMPANIES = ("Bäckerei Sutter AG", "Garage Rossi SA", "Treuhand Meier GmbH", "Fiduciaire Favre Sàrl")
FORMS = ("{street} {number}", "{short} {number}", "{street}{number}")
NUMBERS = ("1", "3", "7", "12", "15", "28", "41", "103", "2a", "5 B", "9bis", "14-16")
UNSPLITTABLE = ("{street} {number}, 3. OG", "{street}", "{street} 4 12")


def phone(rng: random.Random) -> str:
    area, first, second, third = (
        rng.randint(21, 79),
        rng.randint(100, 999),
        rng.randint(10, 99),
        rng.randint(10, 99),
    )
    return f"+41 {area} {first} {second} {third}"


def main() -> None:
    rng = random.Random(300)
    places = [
        row
        for row in csv.DictReader(
            line for line in POSTCODES.read_text(encoding="utf-8").splitlines() if not line.startswith("#")
        )
    ]
    streets = [
        line.split("|", 1)[1]
        for line in NAMES.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    with EXPORT.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle, delimiter=";", lineterminator="\r\n")
        writer.writerow(
            ["KundenNr", "Anrede", "Vorname", "Nachname", "Firma", "Adresse", "PLZ", "Ort", "Telefon"]
        )
        for number in range(1, ROWS + 1):
            place = rng.choice(places)
            street = rng.choice(streets)
            short = street[:-7] + "str." if street.endswith("strasse") else street
            form = rng.choice(UNSPLITTABLE) if rng.random() < 0.04 else rng.choice(FORMS)
            if form == "{street}{number}" and not street[-1].isalpha():
                form = "{street} {number}"
            house = rng.choice(NUMBERS)
            address = form.format(
                street=street, short=short, number=house if "{street}{" not in form else "8"
            )
            if rng.random() < 0.03:
                address = f"Postfach {rng.randint(100, 9999)}"
            company = rng.choice(COMPANIES) if rng.random() < 0.08 else ""
            first = "" if company and rng.random() < 0.5 else rng.choice(FIRST)
            salutation = "Firma" if company and not first else rng.choice(("Herr", "Frau"))
            writer.writerow(
                [
                    f"K-{10000 + number}",
                    salutation,
                    first,
                    rng.choice(LAST) if first else "",
                    company,
                    address,
                    place["postcode"],
                    place["town"],
                    phone(rng),
                ]
            )
    print(f"{EXPORT.relative_to(ROOT)}: {ROWS} rows")  # noqa: T201 - the script's report


if __name__ == "__main__":
    main()
