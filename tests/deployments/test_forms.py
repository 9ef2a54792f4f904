"""Every deployment's parameter form is one a clerk can fill: each field titled in words and described, no
``null`` toggle, and the values the form starts with accepted by the server and read as "not given"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prefect.utilities.callables import parameter_schema
from prefect.utilities.schema_tools import validate

from deployments.catalog import CATALOG, DeploymentSpec
from flows.forms import blank_to_none
from flows.newspaper_forms import OrderForm, PurchaseForm
from flows.newspaper_order import newspaper_order
from flows.newspaper_reports import newspaper_reports
from flows.newspaper_statistics import newspaper_statistics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def schema_of(spec: DeploymentSpec) -> dict[str, Any]:
    schema: dict[str, Any] = parameter_schema(spec.load_flow()).model_dump()
    return schema


def fields(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every field of the form: the parameters and the fields of the objects they hold."""
    for name, field in schema["properties"].items():
        yield name, field
    for model, definition in schema.get("definitions", {}).items():
        for name, field in definition.get("properties", {}).items():
            yield f"{model}.{name}", field


def nodes(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON schema object nested in ``value``."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from nodes(item)
    elif isinstance(value, list):
        for item in value:
            yield from nodes(item)


@pytest.mark.parametrize("spec", CATALOG, ids=lambda spec: spec.name)
def test_every_field_has_a_title_in_words_and_a_description(spec: DeploymentSpec) -> None:
    for name, field in fields(schema_of(spec)):
        title, description = field.get("title", ""), field.get("description", "")
        assert title and title != name.rpartition(".")[2] and "_" not in title, (
            f"{spec.name}: {name} {title!r}"
        )
        assert len(description) > 10, f"{spec.name}: {name} has no description"


@pytest.mark.parametrize("spec", CATALOG, ids=lambda spec: spec.name)
def test_no_field_is_a_null_toggle(spec: DeploymentSpec) -> None:
    for node in nodes(schema_of(spec)):
        assert node.get("type") != "null", f"{spec.name}: {node}"
        assert {"type": "null"} not in node.get("anyOf", []), f"{spec.name}: {node}"
        assert "anyOf" not in node and "oneOf" not in node, f"{spec.name}: a type choice {node}"
        # The UI would send a null default, and the server refuses null for a typed field.
        assert not ("default" in node and node["default"] is None), f"{spec.name}: null default in {node}"


@pytest.mark.parametrize("spec", CATALOG, ids=lambda spec: spec.name)
def test_the_values_a_form_starts_with_are_accepted_and_read_as_not_given(spec: DeploymentSpec) -> None:
    schema = schema_of(spec)
    started = {name: field["default"] for name, field in schema["properties"].items() if "default" in field}
    # A request part the form starts empty: each of its fields with the value its form starts with.
    parts = {name: _part(schema, field) for name, field in schema["properties"].items()}
    for name, part in parts.items():
        if part is not None and name not in started:
            started[name] = {
                key: field["default"] for key, field in part["properties"].items() if "default" in field
            }
    # As the server checks a run's parameters (create_flow_run): the defaults alone, required ones aside.
    errors = validate(started, schema, raise_on_error=False, ignore_required=True)
    assert not errors, [error.message for error in errors]
    flow = spec.load_flow()
    samples = {"integer": 1, "string": "/data/in.csv"}
    required = {
        name: samples[schema["properties"][name]["type"]]
        for name in schema["required"]
        if parts[name] is None
    }
    for name, part in parts.items():
        for field in part.get("required", []) if part is not None else []:
            # A field that shows an example in the form takes it (a postcode is no path).
            shown = part["properties"][field]
            started[name] = {**started[name], field: shown.get("examples", [samples[shown["type"]]])[0]}
    validated = flow.validate_parameters({**started, **required})
    for name, value in started.items():
        if value in ("", [], {}):
            assert validated[name] is None, f"{spec.name}: {name} empty in the form is {validated[name]!r}"
        part = parts[name]
        for key, field in (part or {}).get("properties", {}).items():
            if field.get("default") in ("", [], {}) and key not in part.get("required", []):
                got = getattr(validated[name], key)
                assert got is None, f"{spec.name}: {name}.{key} empty in the form is {got!r}"
    # What a scheduled run or an API call gives by leaving a field out is the flow's own default.
    assert {name for name in schema["properties"] if name not in started} <= set(schema["required"])


def _part(schema: dict[str, Any], field: dict[str, Any]) -> dict[str, Any] | None:
    """The definition of the request part a parameter holds, or None for a plain parameter."""
    ref = field.get("$ref", "")
    definition = schema.get("definitions", {}).get(ref.rpartition("/")[2]) if ref else None
    name = ref.rpartition("/")[2]
    return definition if definition and name.endswith(("Request", "Options")) else None


def test_empty_text_and_a_typed_tab_read_as_not_given_and_tab() -> None:
    assert blank_to_none("  ") is None and blank_to_none([]) is None and blank_to_none(0) == 0
    from flows.address_batch import address_batch

    output = {"output_dir": "out"}
    given = address_batch.validate_parameters(
        {
            "request": {"input_path": "in.csv", "upload_delimiter": "tab", "input_delimiter": "\\t"},
            "output": output,
        }
    )["request"]
    assert given.upload_delimiter == "\t" and given.input_delimiter == "\t"
    same = address_batch.validate_parameters(
        {"request": {"input_path": "in.csv", "input_delimiter": ";"}, "output": output}
    )["request"]
    assert same.input_delimiter == ";" and same.upload_delimiter is None


def test_choices_are_choices_with_a_visible_default() -> None:
    interval = newspaper_statistics.parameters.definitions["StatisticsRequest"]["properties"]["interval"]
    assert interval["enum"] == ["any", "AZ", "AZA", "AZB"] and interval["default"] == "any"

    def chosen(value: str) -> Any:
        return newspaper_statistics.validate_parameters({"request": {"interval": value}})["request"].interval

    assert chosen("any") is None
    assert chosen("AZA") == "AZA"
    kind = newspaper_reports.parameters.definitions["ReportsRequest"]["properties"]["kind"]
    assert kind["enum"] == ["auto", "standard", "gratis"] and kind["default"] == "auto"


def test_the_order_form_has_the_specs_field_names() -> None:
    order = schema_of_model(OrderForm)
    basis = order["definitions"]["BasisInformationForm"]["properties"]
    assert {"newspaperNumber", "issueNumber", "lateDelivery", "deliveryDate"} <= set(basis)
    assert basis["deliveryDate"]["format"] == "date" and "default" not in basis["deliveryDate"]
    assert set(order["definitions"]["IssueNumberForm"]["properties"]) == {"from", "to"}
    request = newspaper_order.parameters.definitions["NewspaperOrderRequest"]
    assert request["properties"]["order"]["$ref"] == "#/definitions/OrderForm"


@pytest.mark.parametrize("example", ["newspaper-order.json", "newspaper-gratis-order.json"])
def test_an_order_file_read_into_the_form_gives_the_same_body(example: str) -> None:
    body = json.loads((EXAMPLES / example).read_text(encoding="utf-8"))
    form = OrderForm.model_validate(body)
    assert form.to_body() == without_empty(body)
    assert form.basis_information.delivery_date is not None and not form.is_empty()
    assert OrderForm().is_empty() and OrderForm.model_validate({"basisInformation": {}}).is_empty()


def test_the_purchase_form_has_the_specs_field_names() -> None:
    body = json.loads((EXAMPLES / "purchase.json").read_text(encoding="utf-8"))
    form = PurchaseForm.model_validate(body)
    assert form.to_body() == without_empty(body)
    assert form.sorting_module.sorting_parameters.weight_per_copy_in_gram == 180
    purchase = schema_of_model(PurchaseForm)
    assert "weightPerCopyInGram" in purchase["definitions"]["SortingParametersForm"]["properties"]
    assert PurchaseForm().is_empty()


def schema_of_model(model: type[Any]) -> dict[str, Any]:
    schema: dict[str, Any] = model.model_json_schema(by_alias=True, ref_template="#/definitions/{model}")
    schema["definitions"] = schema.pop("$defs", {})
    return schema


def without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {key: without_empty(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item not in ("", [], {}, None)}
    if isinstance(value, list):
        return [without_empty(item) for item in value if item not in ("", [], {}, None)]
    return value
