"""A flow's options are one declaration: the flow's parameters (its Prefect form), the ``postflows``
command's options and the pre-check read the same request models, so a title, a description, a flag or a
default cannot differ between them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import typer
from prefect.utilities.callables import parameter_schema
from typer.main import get_command

from deployments.catalog import CATALOG, DeploymentSpec, spec_named
from flows.arrivals import FILE_FLOWS
from flows.requests import AddressBatchRequest, PollingOptions, RequestPart
from flows.requests.base import cli_of, defaults_of, flow_parts, model_of
from postflows import cli
from postflows.cli_commerce import commerce_app
from postflows.cli_lazy import every_command_app
from postflows.cli_requests import option_help

app = every_command_app(cli.app)
COMMANDS = {info.name: info.callback for info in app.registered_commands} | {
    f"commerce {info.name}": info.callback for info in commerce_app.registered_commands
}
CONVERTED = [
    spec for spec in CATALOG if hasattr(COMMANDS.get(spec.command), "request_parts")
]  # the flows whose command is read from their request models

# The command line as users know it: every flag of a converted command (a test of the flags kept).
FLAGS = {
    "address-batch": {
        "input_path", "--out", "-o", "--key", "--resubmit", "--billing-ref", "--client-id", "--client-name",
        "--map", "--delimiter", "--encoding", "--sheet", "--fixed-widths", "--upload-delimiter",
        "--upload-encoding", "--max-wait", "--profile", "--dry-run", "--split", "--no-split",
        "--poll-interval", "--apply",
    },
    "address-query": {
        "input_path", "--out", "-o", "--concurrency", "--billing-ref", "--client-id", "--client-name",
        "--map", "--delimiter", "--encoding", "--sheet", "--fixed-widths", "--split", "--no-split",
        "--resubmit",
    },
    "address-validation": {
        "input_path", "--out", "-o", "--concurrency", "--sheet", "--delimiter", "--encoding", "--apply",
        "--split", "--no-split",
    },
    "deliverability": {
        "input_path", "--out", "-o", "--from", "--days", "--dates", "--concurrency", "--sheet", "--delimiter",
        "--encoding", "--split", "--no-split",
    },
    "commerce product": {"code", "--out", "-o"},
    "commerce same-day": {"--zip", "--city", "--street", "--house-number", "--date", "--out", "-o"},
    "pickup-register": {"input_path", "--out", "-o", "--resubmit", "--split", "--no-split", "--concurrency"},
    "pickup-points": {"input_path", "--out", "-o", "--split", "--no-split", "--concurrency"},
    "address-labels": {"input_path", "--out", "-o", "--resubmit", "--concurrency"},
    "return-order": {"file", "--out", "-o", "--resubmit"},
    "cleanup": {"--older-than", "--force"},
    "report": {"--flow", "--since", "--until", "--whole-months", "--out", "-o"},
    "delivery-sync": {"--out", "-o"},
    "structure-files": {"code", "--out", "-o", "--notify", "--resubmit"},
    "newspaper-sync": {"newspaper_number", "--out", "-o"},
    "newspaper-statistics": {
        "file", "--out", "-o", "--calendar", "--date", "--interval", "--key", "--resubmit",
    },
    "newspaper-reports": {"order_id", "--days", "--out", "-o"},
    "newspaper-order": {
        "order", "--out", "-o", "--gratis", "--resubmit", "--wait-status", "--max-wait", "--poll-interval",
    },
    "address-purchase": {
        "addresses", "--params", "--out", "-o", "--clean-up", "--no-clean-up", "--key", "--resubmit",
        "--max-wait", "--poll-interval",
    },
}  # fmt: skip


def _click_params(command: str) -> dict[str, Any]:
    found: Any = get_command(app)
    for word in command.split():  # a command of a group: its words (``commerce product``)
        assert isinstance(found, typer.core.TyperGroup)
        found = found.commands[word]
    return {param.name: param for param in found.params}


def test_the_big_flows_are_converted() -> None:
    assert {spec.command for spec in CONVERTED} >= set(FLAGS)


@pytest.mark.parametrize("spec", CONVERTED, ids=lambda spec: spec.name)
def test_the_command_takes_the_flows_parts(spec: DeploymentSpec) -> None:
    parts = COMMANDS[spec.command].request_parts  # type: ignore[union-attr]
    flow = spec.load_flow()
    assert {model_of(part) for part in parts} == set(flow_parts(flow.fn).values())


@pytest.mark.parametrize("spec", CONVERTED, ids=lambda spec: spec.name)
def test_form_title_description_and_command_help_are_one_declaration(spec: DeploymentSpec) -> None:
    schema = parameter_schema(spec.load_flow().fn).model_dump()
    params = _click_params(spec.command)
    flags: set[str] = set()
    for part in COMMANDS[spec.command].request_parts:  # type: ignore[union-attr]
        model = model_of(part)
        form = schema["definitions"][model.__name__]["properties"]
        defaults = defaults_of(part)
        for name, info in model.model_fields.items():
            assert form[name]["title"] == info.title and form[name]["description"] == info.description
            cli = cli_of(info)
            if cli is None:
                continue
            param = params[cli.argument or name]
            assert param.help == option_help(info, cli), f"{spec.command}: {name}"
            flags |= set(param.opts) | set(param.secondary_opts)
            if cli.required or info.is_required():
                assert param.required, f"{spec.command}: {name} is required"
            elif cli.unset:
                assert param.default is None, f"{spec.command}: {name} shows no default"
            elif cli.takes is None:
                assert param.default == defaults[name], f"{spec.command}: {name}"
    assert flags == FLAGS[spec.command]


@pytest.mark.parametrize("spec", CONVERTED, ids=lambda spec: spec.name)
def test_a_part_parameters_default_is_the_commands(spec: DeploymentSpec) -> None:
    schema = parameter_schema(spec.load_flow().fn).model_dump()
    for part in COMMANDS[spec.command].request_parts:  # type: ignore[union-attr]
        parameter = next(
            field
            for field in schema["properties"].values()
            if field.get("$ref", "").endswith("/" + model_of(part).__name__)
        )
        if isinstance(part, RequestPart):
            assert parameter["default"] == part.model_dump(mode="json")


def test_the_longest_check_interval_is_the_pollers() -> None:
    from tasks.polling import DEFAULT_MAX_INTERVAL_S

    assert PollingOptions().max_poll_interval_s == DEFAULT_MAX_INTERVAL_S


def test_the_most_days_are_the_deliverability_checks() -> None:
    from fileio.commerce.days import MAX_DAYS
    from flows.requests import commerce

    assert commerce.MAX_DAYS == MAX_DAYS


def test_the_batch_identity_is_what_its_key_hashed() -> None:
    request = AddressBatchRequest(
        input_path=Path("in.csv"), billing_reference="4711", column_mapping={"K": "Name"}
    )
    assert request.identity() == {
        "billing_reference": "4711",
        "client_identifier": None,
        "client_name": None,
        "column_mapping": {"K": "Name"},
        "split_house_numbers": True,
    }


def test_the_identities_are_what_the_keys_hashed_before() -> None:
    """The names and values the idempotency keys hashed before the requests were models: a re-run of work
    started before still resumes it."""
    from flows.requests import (
        AddressPurchaseRequest,
        AddressQueryRequest,
        AddressValidationRequest,
        DeliverabilityRequest,
        StatisticsRequest,
    )

    purchase = AddressPurchaseRequest(addresses_path=Path("a.csv"), address_clean_up="yes")
    assert purchase.identity() == {"address_clean_up": True}
    statistics = StatisticsRequest(input_path=Path("s.csv"), submission_date="2026-03-02")
    assert statistics.identity() == {"submission_date": dt.date(2026, 3, 2)}
    query = AddressQueryRequest(input_path=Path("q.csv"), billing_reference="7")
    assert query.identity() == {
        "billing_reference": "7",
        "column_mapping": None,
        "split_house_numbers": True,
        "timeout_ms": 10000,
    }
    # --resubmit asks the uncertain rows of the same work again: it must find that work's checkpoint.
    resubmitting = AddressQueryRequest(input_path=Path("q.csv"), billing_reference="7", resubmit=True)
    assert resubmitting.identity() == query.identity()
    reading = {"sheet": "S", "delimiter": ";", "encoding": None}
    given = {"input_path": Path("c.csv"), "input_sheet": "S", "input_delimiter": ";"}
    assert AddressValidationRequest(**given).identity() == reading
    assert DeliverabilityRequest(**given, days=3).identity() == reading


def test_a_file_arriving_fills_the_request_and_the_output() -> None:
    spec = spec_named("address-batch")
    parameters = FILE_FLOWS["address-batch"].parameters("/in/kunden.csv", "/data/arrivals/kunden-1")
    assert parameters == {
        "request": {"input_path": "/in/kunden.csv"},
        "output": {"output_dir": "/data/arrivals/kunden-1"},
    }
    validated = spec.load_flow().validate_parameters(parameters)
    assert validated["request"].input_path == Path("/in/kunden.csv")
    assert validated["polling"].min_poll_interval_s == 1.0


def test_a_value_a_part_refuses_is_a_usage_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(
        app, ["address-batch", str(tmp_path / "in.csv"), "--out", str(tmp_path), "--max-wait", "x"]
    )
    assert result.exit_code == 2
