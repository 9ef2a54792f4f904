"""The newspaper forms are generated from the connector's request models: they agree field by field, and a
body breaking a field's constraint is refused the same way whether it comes from a JSON file or a form."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prefect.utilities.schema_tools import validate
from pydantic import BaseModel

from connectors.newspaper import GratisOrder, Purchase, StandardOrder
from fileio.errors import InputError
from fileio.newspaper.order_input import load_order
from fileio.newspaper.purchase_input import load_purchase_parameters
from flows.newspaper_forms import OrderForm, PurchaseForm
from flows.newspaper_order import _the_order, newspaper_order
from flows.purchase_input import _form_parameters
from flows.spec_forms import CONSTRAINT_KEYWORDS, SpecForm, form_model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def definitions(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Every object of a model's JSON schema by name, the model itself included."""
    schema = model.model_json_schema(by_alias=True)
    found: dict[str, dict[str, Any]] = schema.pop("$defs", {})
    return {**found, schema["title"]: schema}


def scalar(field: dict[str, Any]) -> dict[str, Any]:
    """A field's schema without its null branch."""
    branches = [branch for branch in field.get("anyOf", [field]) if branch != {"type": "null"}]
    return {**branches[0], **{key: value for key, value in field.items() if key != "anyOf"}}


def pairs(
    model: type[BaseModel], form: type[SpecForm]
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """(path, connector field, form field or None) for every field of ``model`` and of the objects it holds;
    the form of a connector object ``X`` is ``XForm``, that of ``model`` itself ``form``."""
    form_defs = definitions(form)
    for name, definition in definitions(model).items():
        form_name = form.__name__ if name == model.__name__ else f"{name}Form"
        for alias, field in definition["properties"].items():
            shown = form_defs.get(form_name, {}).get("properties", {}).get(alias)
            yield f"{name}.{alias}", scalar(field), shown


def constraints(field: dict[str, Any]) -> dict[str, Any]:
    found = {key: value for key, value in field.items() if key in CONSTRAINT_KEYWORDS - {"examples"}}
    pattern = found.get("pattern")
    if isinstance(pattern, str) and pattern.startswith("^(") and pattern.endswith(")?$"):
        found["pattern"] = f"^{pattern[2:-3]}$"  # the form's pattern also matches the blank field
    return found


@pytest.mark.parametrize(
    ("models", "form", "left_out"),
    [
        ((StandardOrder, GratisOrder), OrderForm, ()),
        ((Purchase,), PurchaseForm, ("Purchase.addresses", "PurchaseAddress.")),
    ],
)
def test_the_form_and_the_connector_model_agree_field_by_field(
    models: tuple[type[BaseModel], ...], form: type[SpecForm], left_out: tuple[str, ...]
) -> None:
    checked = 0
    for model in models:
        for path, field, shown in pairs(model, form):
            if path.startswith(left_out) or _open_shape(field):
                assert shown is None, f"{path} is offered in the form"
                continue
            assert shown is not None, f"{path} is not in the form"
            assert (shown.get("title"), shown.get("description")) == (field["title"], field["description"]), (
                path
            )
            assert constraints(shown) == constraints(field), path
            assert "default" not in shown or shown["default"] in (False, []), path
            checked += 1
    assert checked >= 20


def _open_shape(field: dict[str, Any]) -> bool:
    """A field whose shape the spec does not show (an object or a list of objects of any keys)."""
    items = field.get("items", {})
    return field.get("type") == "object" or (field.get("type") == "array" and items.get("type") == "object")


def test_the_sender_postcode_is_an_integer_without_a_range_the_spec_does_not_give() -> None:
    sender = definitions(OrderForm)["SenderForm"]["properties"]["zipCode"]
    assert "minimum" not in sender and "maximum" not in sender
    assert sender["title"] == "Postcode" and "default" not in sender


@pytest.mark.parametrize("weight", [0, -5])
def test_a_weight_out_of_range_is_refused_alike_from_a_file_and_the_form(tmp_path: Path, weight: int) -> None:
    body = json.loads((EXAMPLES / "newspaper-order.json").read_text(encoding="utf-8"))
    body["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"] = weight
    path = tmp_path / "order.json"
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as from_file:
        load_order(path, "standard")
    with pytest.raises(InputError) as from_form:
        _the_order(None, OrderForm.model_validate(body), "standard")
    field = "nationalDelivery.sortedDelivery.sortedShipments[0].weight"
    message = "Input should be greater than or equal to 1"
    # The same problem of the same field; the file's names the line too.
    assert str(from_form.value) == f"order (form): not a valid standard order: {field}: {message}"
    assert re.search(
        rf"not a valid standard order: {re.escape(field)} \(line \d+, column \d+\): {message}",
        str(from_file.value),
    )
    # The deployment's form refuses it before a run starts: the server checks the same schema.
    schema = newspaper_order.parameters.model_dump()
    errors = validate({"request": {"order": body}}, schema, raise_on_error=False, ignore_required=True)
    assert any("weight" in str(list(error.path)) for error in errors)


def test_a_field_the_form_does_not_show_is_kept() -> None:
    body = {
        "basisInformation": {"newspaperNumber": "4711", "lateDelivery": False, "note": "x"},
        "nationalDelivery": {"sortedDelivery": {"largeEditionShipments": [{"count": 5}]}},
        "sortFileRef": {"id": 1},
    }
    assert OrderForm.model_validate(body).to_body() == body


def test_models_that_declare_a_shared_field_differently_are_refused() -> None:
    class One(BaseModel):
        language: str | None = None

    class Other(BaseModel):
        language: int | None = None

    with pytest.raises(TypeError, match="language is declared differently"):
        form_model("Both", One, Other)


def test_purchase_parameters_breaking_a_constraint_are_refused_alike_from_a_file_and_the_form(
    tmp_path: Path,
) -> None:
    body = json.loads((EXAMPLES / "purchase.json").read_text(encoding="utf-8"))
    body.pop("addresses", None)
    body["sortingModule"]["sortingParameters"]["weightPerCopyInGram"] = 0
    path = tmp_path / "purchase.json"
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as from_file:
        load_purchase_parameters(path)
    with pytest.raises(InputError) as from_form:
        _form_parameters(None, PurchaseForm.model_validate(body))
    field, message = (
        "sortingModule.sortingParameters.weightPerCopyInGram",
        "Input should be greater than or equal to 1",
    )
    assert str(from_form.value) == f"purchase (form): not valid purchase parameters: {field}: {message}"
    assert f"not valid purchase parameters: {field} (line " in str(from_file.value)
    assert str(from_file.value).split("): ", 1)[1].startswith(message)
