"""The commerce look-ups are deployments with typed forms, like every flow; the deliverability form takes
explicit delivery dates."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml
from prefect.utilities.callables import parameter_schema

from deployments.serve import deployments
from flows.deliverability_check import deliverability_check
from flows.logistic_product import logistic_product
from flows.same_day_acceptance import same_day_acceptance

ROOT = Path(__file__).resolve().parents[2]


def test_the_look_ups_are_served_and_listed_in_prefect_yaml() -> None:
    built = {deployment.name: deployment for deployment in deployments()}
    listed = {d["name"]: d for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]}
    for name, entrypoint in (
        ("logistic-product", "flows/logistic_product.py:logistic_product"),
        ("same-day-acceptance", "flows/same_day_acceptance.py:same_day_acceptance"),
    ):
        assert built[name].tags == ["commerce"] and built[name].description
        assert listed[name]["entrypoint"] == entrypoint and listed[name]["tags"] == ["commerce"]


def test_the_product_form_needs_a_code_and_nothing_else() -> None:
    schema = parameter_schema(logistic_product.fn).model_dump()
    assert schema["required"] == ["request"]
    product = schema["definitions"]["LogisticProductRequest"]
    assert (
        product["required"] == ["product_code"] and product["properties"]["product_code"]["maxLength"] == 50
    )
    validated = logistic_product.validate_parameters({"request": {"product_code": "PRI"}})
    assert validated["request"].product_code == "PRI" and validated["output"].output_dir is None


def test_the_same_day_form_needs_a_zip_and_takes_an_empty_day() -> None:
    schema = parameter_schema(same_day_acceptance.fn).model_dump()
    request = schema["definitions"]["SameDayAcceptanceRequest"]
    assert request["required"] == ["zip_code"]
    date = request["properties"]["delivery_date"]
    assert date["pattern"] == r"^(\d{4}-\d{2}-\d{2})?$" and date["default"] == ""

    def given(day: str) -> dt.date | None:
        parameters = {"request": {"zip_code": "8001", "city": "", "delivery_date": day}, "output": {}}
        validated = same_day_acceptance.validate_parameters(parameters)
        assert validated["request"].city is None
        value: dt.date | None = validated["request"].delivery_date
        return value

    assert given("2026-03-03") == dt.date(2026, 3, 3)
    assert given("") is None


def test_the_deliverability_form_takes_dates_with_the_default_day_count() -> None:
    properties = parameter_schema(deliverability_check.fn).model_dump()["definitions"][
        "DeliverabilityRequest"
    ]
    assert properties["properties"]["dates"]["default"] == ""
    # What the form sends: every field, the day count at its default.
    request = {"input_path": "in.csv", "start": "", "days": 14, "dates": "2026-03-02,2026-03-04"}
    validated = deliverability_check.validate_parameters(
        {"request": request, "output": {"output_dir": "out"}}
    )
    assert validated["request"].dates == "2026-03-02,2026-03-04"
