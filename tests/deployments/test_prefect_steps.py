"""The build step of ``prefect.yaml`` keeps the parameter defaults set on the server: run by Prefect's own
step runner and filled in by Prefect's own templating as ``prefect deploy`` does (Prefect 3.8.8), a default
the server has is sent again, one it has not is left out, and no warning is printed for it."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from prefect.deployments.steps.core import run_steps
from prefect.utilities.templating import apply_values

from deployments import yaml as prefect_yaml
from deployments.catalog import spec_named
from deployments.prefect_steps import TEMPLATING_LOGGER, UnsetDefaultsFilter, install_filter


class _Recorded(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def warnings_shown() -> Iterator[list[str]]:
    """What Prefect's templating logger lets through (its filters run first), with no filter of ours at the
    start and none left after."""
    logger = logging.getLogger(TEMPLATING_LOGGER)
    ours = [installed for installed in logger.filters if isinstance(installed, UnsetDefaultsFilter)]
    for installed in ours:
        logger.removeFilter(installed)
    handler = _Recorded()
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        for installed in list(logger.filters):
            if isinstance(installed, UnsetDefaultsFilter):
                logger.removeFilter(installed)


def as_prefect_deploy_fills_in(entry: dict[str, Any], step_outputs: dict[str, Any]) -> dict[str, Any]:
    """``entry`` after Prefect 3.8.8's ``prefect deploy`` filled in the build steps' outputs."""
    filled: dict[str, Any] = apply_values(entry, step_outputs, warn_on_notset=True, skip_prefixes=["ctx."])
    return filled


def test_only_the_warnings_about_this_steps_placeholders_are_dropped(warnings_shown: list[str]) -> None:
    template = {"a": "{{ on-server.output }}", "b": "{{ build-image.image }}", "c": "at {{ on-server.x }}"}
    as_prefect_deploy_fills_in(template, {})
    assert len(warnings_shown) == 3 and all("not found in provided values" in m for m in warnings_shown)

    warnings_shown.clear()
    install_filter()
    install_filter()
    ours = [f for f in logging.getLogger(TEMPLATING_LOGGER).filters if isinstance(f, UnsetDefaultsFilter)]
    assert len(ours) == 1, "installed once"
    assert as_prefect_deploy_fills_in(template, {}) == {"c": "at "}
    assert warnings_shown == [
        "Value for placeholder 'build-image.image' not found in provided values. Please ensure that the "
        "placeholder is spelled correctly and that the corresponding value is provided."
    ]
    logging.getLogger(TEMPLATING_LOGGER).warning("something else")
    assert warnings_shown[-1] == "something else"


def test_a_default_on_the_server_is_sent_again_and_the_others_are_left_out() -> None:
    entry = prefect_yaml.deployment_entry(spec_named("newspaper-reports"))
    assert set(entry["parameters"]) == {"request", "output"}
    output = {"output_dir": "/srv/reports"}
    filled = as_prefect_deploy_fills_in(entry, {"on-server": {"output": output, "stale": 1}})
    assert filled["parameters"] == {"output": output}
    assert as_prefect_deploy_fills_in(entry, {"on-server": {}})["parameters"] == {}
    # The rest of the entry is as written.
    assert {key: value for key, value in filled.items() if key != "parameters"} == {
        key: value for key, value in entry.items() if key != "parameters"
    }


async def test_the_step_reads_the_defaults_of_the_deployment_on_the_server(
    prefect_harness: None, warnings_shown: list[str]
) -> None:
    from prefect.client.orchestration import get_client

    flow_name, name = f"steps-{uuid.uuid4().hex[:8]}", "reports"
    defaults = {"output": {"output_dir": "/srv/reports"}}
    async with get_client() as client:
        flow_id = await client.create_flow_from_name(flow_name)
        await client.create_deployment(flow_id=flow_id, name=name, parameters=defaults)

    entry = prefect_yaml.deployment_entry(spec_named("newspaper-reports"))
    (step,) = entry["build"]
    ((function, inputs),) = step.items()

    found = await run_steps([{function: {**inputs, "deployment": f"{flow_name}/{name}"}}])
    assert found["on-server"] == defaults
    assert as_prefect_deploy_fills_in(entry, found)["parameters"] == defaults

    missing = await run_steps([{function: {**inputs, "deployment": f"{flow_name}/not-deployed-yet"}}])
    assert missing["on-server"] == {}
    assert as_prefect_deploy_fills_in(entry, missing)["parameters"] == {}
    assert warnings_shown == [], "the step installs the filter: an unset default is no warning"
