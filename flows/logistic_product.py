"""A logistic product of the commerce API (§2.6): its barcode, delivery instructions and additional services
(the mandatory ones marked), with their names from the stored reference data when a delivery-sync stored
them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger
from pydantic import Field

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.json_text import json_text
from fileio.files import write_received
from flows.commerce_results import KeepsNone
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import LogisticProductRequest, LookupOutput
from flows.runs import begin_run, recorded_run
from history.identity import derive_key
from tasks.commerce.logistic_product import (
    as_received,
    fetch_logistic_product,
    product_markdown,
    stored_option_names,
)
from tasks.retrying import run_step

FLOW_NAME = "logistic-product"
PRODUCT_FILE = "product.json"


class LogisticProductResult(KeepsNone):
    """A logistic product as looked up: its code and barcode, the counts of its delivery instructions and
    additional services, the codes of the mandatory services; and, not kept with the run, the answer as
    received (``answer``) and the stored names of its codes (``names``, per kind: code → name)."""

    product_code: str
    barcode: str | None
    delivery_instructions: int
    additional_services: int
    mandatory_services: list[str]
    answer: dict[str, Any] = Field(exclude=True)
    names: dict[str, dict[str, str]] = Field(exclude=True)


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(FLOW_NAME, "request.product_code"),
)
async def logistic_product(
    request: Annotated[
        LogisticProductRequest, form("Product", "The code of the logistic product to look up.")
    ],
    output: Annotated[
        LookupOutput, form("Output", "Where the answer as received goes on the worker, if anywhere.")
    ] = LookupOutput(),  # noqa: B008 - an immutable part, the form's default
) -> LogisticProductResult:
    """Look up how a logistic product is delivered: its barcode, delivery instructions and additional
    services, the mandatory ones marked.

    The names of the instructions and services come from the reference data a delivery-sync stored (none
    before the first one). A product the service does not know (HTTP 404) fails the run saying so.

    Args:
        request: the product's code (ECO, PRI, …).
        output: where product.json (the answer as received) and summary.md go; none are written when empty.

    Returns:
        The run's result: the product code, its barcode, the counts of instructions and services, the
        mandatory services and the files; and, not kept with the run, the answer as received (``answer``)
        and the stored names of its codes (``names``).
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    code, output_dir = request.product_code, output.output_dir
    key = derive_key(FLOW_NAME, endpoint=run.endpoint("commerce"), parameters={"product_code": code})
    parameters = {"product_code": code, "output_dir": output_dir}
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with run.commerce(recorder.request_log) as client:
            product = await run_step(fetch_logistic_product, client, code)
        names = await asyncio.to_thread(stored_option_names, settings.effective_database_url)
        answer = as_received(product)
        if output_dir is not None:
            text = json_text(answer, indent=2) + "\n"
            write_received(Path(output_dir) / PRODUCT_FILE, text.encode())
            await recorder.document("product", Path(output_dir) / PRODUCT_FILE)
        mandatory = [item.code for item in product.additional_services if item.mandatory]
        summary.update(
            product_code=product.product_code,
            barcode=product.barcode,
            delivery_instructions=len(product.delivery_instructions),
            additional_services=len(product.additional_services),
            mandatory_services=mandatory,
        )
        report = product_markdown(product, names)
        await summary.publish(report, output_dir, description=f"Logistic product {product.product_code}")
        get_run_logger().info(
            "product %s: %d delivery instructions, %d additional services (%d mandatory)",
            product.product_code,
            len(product.delivery_instructions),
            len(product.additional_services),
            len(mandatory),
        )
        return summary.result(LogisticProductResult, answer=answer, names=names.as_dict())
