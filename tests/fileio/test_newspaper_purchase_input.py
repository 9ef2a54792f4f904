"""Purchase input: §2.7 names or batch header aliases, rejected rows, parameters checked before sending."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from connectors.newspaper import OrderInvalid
from connectors.newspaper.errors import FieldProblem
from fileio.errors import InputError
from fileio.newspaper.purchase_input import load_purchase_parameters, purchase_columns, read_purchase_input

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


def test_control_characters_reject_the_row_and_are_never_sent(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(
        b"id,lastName,street,zipCode,city\n"
        b"A-1,Muster,Hauptstr.,6280,Hochdorf\n"
        b"A-2,Mu\x00ster,Hauptstr.,6280,Hochdorf\n"
        b"A-3,Keller,Haupt\x1bstr.,6280,Hochdorf\n"
        b'A-4,Lang,"Haupt\tstr.",6280,Hochdorf\n'
    )
    checked = read_purchase_input(path, {}, today=TODAY)
    assert [address.id for address in checked.purchase.addresses] == ["A-1", "A-4"]
    assert checked.rows == [1, 4]
    assert checked.rejected.values.tolist() == [
        [2, "lastName", "Mu\\x00ster", "control character U+0000 (NUL) in the value"],
        [3, "street", "Haupt\\x1bstr.", "control character U+001B (ESC) in the value"],
    ]
    assert checked.input_rows == 4


def test_a_line_in_another_encoding_is_rejected_not_sent_garbled(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(
        b"lastName,zipCode,city\n"
        + "Müller,6280,Hochdorf\n".encode()
        + "Bühler,6280,Hochdorf\n".encode("cp1252")
        + "Gärtner,6280,Hochdorf\n".encode()
    )
    checked = read_purchase_input(path, {}, today=TODAY)
    assert [address.last_name for address in checked.purchase.addresses] == ["Müller", "Gärtner"]
    assert checked.rejected[["row", "field"]].values.tolist() == [[2, ""]]
    assert "not valid UTF-8" in checked.rejected.loc[0, "reason"]


def test_a_quote_never_closed_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    rows = [f"Muster{n},{n}1{n}0,Hochdorf,Weg" for n in range(1, 9)]
    rows[1] = '"Muster2,6210,Hochdorf,Weg'
    path.write_text("lastName,zipCode,city,street\n" + "\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 3: a quote opened here is never closed"):
        read_purchase_input(path, {}, today=TODAY)


def test_rows_that_do_not_add_up_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.csv"
    path.write_text("lastName,zipCode,city\nMuster,6280,Hochdorf\nKeller,6280,Hochdorf\n", encoding="utf-8")
    monkeypatch.setattr(
        "fileio.newspaper.purchase_input.check_purchase",
        lambda purchase, today: [_problem("addresses[0].city")],
    )
    monkeypatch.setattr("fileio.newspaper.purchase_input.pd.DataFrame.sort_values", _duplicating_sort)
    with pytest.raises(InputError, match=r"2 data rows were read, but 1 accepted \+ 2 rejected \+ 0 empty"):
        read_purchase_input(path, {}, today=TODAY)


def _problem(path: str) -> FieldProblem:
    return FieldProblem(path, "bad")


_real_sort = pd.DataFrame.sort_values


def _duplicating_sort(self: pd.DataFrame, *args: object, **kwargs: object) -> pd.DataFrame:
    """Loses track of a row the way a bug would: the rejected report names a row that was accepted."""
    frame = _real_sort(self, *args, **kwargs)  # type: ignore[call-overload]
    if list(frame.columns) == ["row", "field", "value", "reason"] and len(frame):
        extra = frame.iloc[:1].assign(row=2)
        return pd.concat([frame, extra], ignore_index=True)
    return frame  # type: ignore[no-any-return]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_parameters_saved_as_utf16_are_refused_by_name(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"purchase{suffix}"
    path.write_bytes('{"title": "Abo"}'.encode("utf-16"))
    with pytest.raises(InputError, match="line 1, column 1: not UTF-8 text"):
        load_purchase_parameters(path)
