"""Purchase input: §2.7 names or batch header aliases, rejected rows, parameters checked before sending."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from connectors.newspaper import OrderInvalid
from tasks.errors import InputError
from tasks.newspaper.purchase_input import load_purchase_parameters, purchase_columns, read_purchase_input

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TODAY = dt.date(2030, 1, 1)


def test_columns_by_spec_name_then_alias() -> None:
    assert purchase_columns(["ID", "Vorname", "Nachname", "Strasse", "Nr.", "PLZ", "Ort", "Land"]) == {
        "id": "ID",
        "firstName": "Vorname",
        "lastName": "Nachname",
        "street": "Strasse",
        "houseNumber": "Nr.",
        "zipCode": "PLZ",
        "city": "Ort",
        "isoCode": "Land",
    }
    # The spec name wins over an alias of the same field.
    assert purchase_columns(["Ort", "city"])["city"] == "city"
    assert purchase_columns(["Prénom", "Nom", "NPA", "Localité"]) == {
        "firstName": "Prénom",
        "lastName": "Nom",
        "zipCode": "NPA",
        "city": "Localité",
    }


def test_example_input() -> None:
    parameters = load_purchase_parameters(EXAMPLES / "purchase.json")
    checked = read_purchase_input(EXAMPLES / "purchase-addresses.csv", parameters, today=TODAY)
    assert checked.rows == [1, 2, 3, 4, 5, 6] and checked.rejected.empty
    body = checked.purchase.to_body()
    assert body["addresses"][0] == {
        "id": "A-001",
        "firstName": "Anna",
        "lastName": "Muster",
        "street": "Hauptstr.",
        "houseNumber": "12",
        "zipCode": 6280,
        "city": "Hochdorf",
        "isoCode": "CH",
    }
    assert body["addressCleanUp"] is True
    assert body["sortingModule"]["sortingParameters"]["weightPerCopyInGram"] == 180


def test_xlsx_without_id_column_uses_row_numbers(tmp_path: Path) -> None:
    path = tmp_path / "addresses.xlsx"
    pd.DataFrame(
        {
            "Name": ["Muster", "Keller"],
            "PLZ": [6280, 99999],
            "Ort": ["Hochdorf", "Weggis"],
            "Land": ["ch", "CH"],
        }
    ).to_excel(path, index=False)
    checked = read_purchase_input(path, {"title": "t"}, today=TODAY)
    assert [address.id for address in checked.purchase.addresses] == ["1"]
    assert checked.purchase.addresses[0].iso_code == "CH"
    assert checked.rejected[["row", "field", "value"]].values.tolist() == [[2, "zipCode", "99999"]]


def test_parameter_problems_raise_with_field_path(tmp_path: Path) -> None:
    with pytest.raises(OrderInvalid, match="offerEmail"):
        read_purchase_input(EXAMPLES / "purchase-addresses.csv", {"offerEmail": "nobody"}, today=TODAY)
    with pytest.raises(OrderInvalid, match="depositDate"):
        read_purchase_input(EXAMPLES / "purchase-addresses.csv", {"depositDate": "yesterday"}, today=TODAY)


def test_no_usable_row_and_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("lastName,zipCode,city\nMuster,12a,Hochdorf\n", encoding="utf-8")
    with pytest.raises(InputError, match="no address row"):
        read_purchase_input(path, {}, today=TODAY)
    path.write_text("lastName,street\nMuster,Hauptstrasse\n", encoding="utf-8")
    with pytest.raises(InputError, match="zipCode"):
        read_purchase_input(path, {}, today=TODAY)


def test_parameters_from_yaml_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("title: Abo\nlevelValidation: COMPLETE\n", encoding="utf-8")
    assert load_purchase_parameters(path) == {"title": "Abo", "levelValidation": "COMPLETE"}
    path.write_text("addresses: []\n", encoding="utf-8")
    with pytest.raises(InputError, match="address file"):
        load_purchase_parameters(path)
    path.write_text("- a\n", encoding="utf-8")
    with pytest.raises(InputError, match="object"):
        load_purchase_parameters(path)
