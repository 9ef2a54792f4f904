"""Where ``postflows autocomplete`` and ``postflows verify-building`` go: the address assistant has no test
environment (§4.4), so with a real batch address they need ``POSTFLOWS_ADDRESS_ASSISTANT_URL`` and refuse
without it, before any request."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from connectors.address_service import AddressServiceClient
from postflows.cli import app

runner = CliRunner()
COMMANDS = [
    ["autocomplete", "towns", "--zip", "60", "--town", "K"],
    ["verify-building", "--street", "Lindenstrasse", "--house-no", "12", "--zip", "6010", "--town", "Kriens"],
]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths every address-service client was asked to send to (nothing is sent)."""
    paths: list[str] = []

    async def request(self: AddressServiceClient, method: str, path: str, **options: Any) -> Any:
        paths.append(path)
        raise AssertionError(f"{method} {path} was sent")

    monkeypatch.setattr(AddressServiceClient, "request", request)
    monkeypatch.setenv("COLUMNS", "200")
    return paths


@pytest.mark.parametrize("command", COMMANDS, ids=["autocomplete", "verify-building"])
def test_a_real_batch_address_without_an_assistant_address_is_refused_before_any_request(
    sent: list[str], monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "https://test.addresses.example.test/REST/v1")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_USER", "tech-user")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_PASSWORD", "pw")
    result = runner.invoke(app, command)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("configuration error: ")
    assert "POSTFLOWS_ADDRESS_ASSISTANT_URL must be set" in lines[0]
    assert sent == []


def test_the_autocomplete_command_takes_its_options_from_one_request_model(sent: list[str]) -> None:
    from postflows.assistant_requests import AutocompleteRequest
    from postflows.cli import autocomplete_command

    assert autocomplete_command.request_parts == (AutocompleteRequest,)  # type: ignore[attr-defined]
    refused = runner.invoke(app, ["autocomplete", "towns", "--zip-filter-mode", "-1"])
    assert refused.exit_code == 2 and "--zip-filter-mode" in refused.output
    assert sent == []


async def test_a_version_that_cannot_send_the_request_is_refused_before_any_request(sent: list[str]) -> None:
    from postflows.assistant import autocomplete
    from postflows.assistant_requests import AutocompleteRequest

    with pytest.raises(ValueError, match="--version must be 2, 3 or 4, not 5"):
        await autocomplete(AutocompleteRequest(target="towns", version=5))
    with pytest.raises(ValueError, match="autocomplete4 only, not by --version 3"):
        await autocomplete(AutocompleteRequest(target="towns", zip_filter_mode=1, version=3))
    assert sent == []
