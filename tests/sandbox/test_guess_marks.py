"""The sandbox marks every answer it invents with the registered guesses it plays, and plays each of them the
other plausible way when asked; the clients stay right under both answers."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from connectors.address_service import AddressServiceClient, AuthenticationStatusError
from connectors.guesses import BY_ID, GUESS_HEADER
from connectors.http import ClientOptions
from sandbox.address_service.jobs import TokenStatus
from sandbox.app import create_app
from sandbox.config import OTHER_COMMERCE_PATHS, SandboxConfig, with_other_answers
from sandbox.guesses import ENDPOINT_GUESSES, GUESS_LOG_VARIABLE
from sandbox.inprocess import SandboxTransport, address_assistant_url, address_service_url
from tests import guess_watch

SANDBOX = Path(__file__).resolve().parents[2] / "sandbox"
USER, PASSWORD = "sandbox-user", "sandbox-password"
MAINTENANCE = "postflows_maintenance_v1"
KRIENS = {"Prename_in": "Hans", "Name_in": "Muster", "Streetname_in": "Lindenstrasse", "HouseNo_in": "12"}
KRIENS |= {"ZipCode_in": "6010", "TownName_in": "Kriens"}


def test_every_guess_the_sandbox_marks_is_registered() -> None:
    marked = {guess_id for rule in ENDPOINT_GUESSES for guess_id in rule.ids}
    played = set()
    for source in SANDBOX.rglob("*.py"):
        for call in re.findall(r"play\(\s*request,([^)]*)\)", source.read_text(encoding="utf-8")):
            played.update(re.findall(r'"([a-z0-9.-]+)"', call))
    assert played, "no handler marks a guess of its own"
    assert sorted((marked | played) - set(BY_ID)) == []


def test_the_header_names_the_same_guesses_as_the_register() -> None:
    assert GUESS_HEADER.lower() == "x-sandbox-guess"


@pytest.mark.parametrize("guesses", ["ours", "other"])
async def test_an_invented_answer_carries_the_guess_it_plays_and_is_logged(
    guesses: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "played.log"
    monkeypatch.setenv(GUESS_LOG_VARIABLE, str(log))
    app = create_app(SandboxConfig(guesses=guesses))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sandbox") as http:
        answer = await http.get("/address/REST/v1/ping", auth=(USER, PASSWORD))
    assert answer.status_code == 200
    assert answer.headers[GUESS_HEADER] == "address-service.ping-body"
    assert log.read_text(encoding="utf-8").split() == ["address-service.ping-body"]
    assert guess_watch.unregistered(guess_watch.played()) == []


def test_the_other_answers_move_what_a_setting_moves_unless_configured() -> None:
    other = with_other_answers(SandboxConfig(guesses="other"))
    assert other.commerce_paths == OTHER_COMMERCE_PATHS
    assert other.order_statuses == ("LOADED", "CONTROL", "RELEASED")
    assert other.purchase_output_path_spelling == "outputaddresses"
    assert other.max_queries_per_minute == 600
    kept = with_other_answers(
        SandboxConfig(guesses="other", order_statuses=("LOADED", "CONTROL"), max_queries_per_minute=5)
    )
    assert kept.order_statuses == ("LOADED", "CONTROL") and kept.max_queries_per_minute == 5
    ours = with_other_answers(SandboxConfig())
    assert ours.commerce_paths == SandboxConfig().commerce_paths


def _client(config: SandboxConfig, password: str = PASSWORD, url: str | None = None) -> AddressServiceClient:
    return AddressServiceClient(
        url or address_service_url(),
        username=USER,
        password=SecretStr(password),
        options=ClientOptions(transport=SandboxTransport(config)),
    )


@pytest.mark.parametrize("guesses", ["ours", "other"])
async def test_a_refused_sign_in_is_status_101_whatever_its_http_status(guesses: str) -> None:
    config = SandboxConfig(guesses=guesses)  # type: ignore[arg-type]
    async with _client(config, password="wrong-password") as client:
        with pytest.raises(AuthenticationStatusError, match="Status 101") as refused:
            await client.create_file()
    assert refused.value.not_processed


@pytest.mark.parametrize("guesses", ["ours", "other"])
async def test_queries_and_building_checks_are_read_in_either_shape(guesses: str) -> None:
    config = SandboxConfig(guesses=guesses)  # type: ignore[arg-type]
    async with _client(config) as client, _client(config, url=address_assistant_url()) as assistant:
        plain = await client.run_query(MAINTENANCE, 7, KRIENS)
        billed = await client.run_query(MAINTENANCE, 8, KRIENS, billing_reference="RRN-0001")
        building = await assistant.verify_building(
            street_name="Lindenstrasse", house_no="12", zip_code="6010", town_name="Kriens"
        )
    assert plain.id == 7 and billed.id == 8
    assert plain.fields.get("QSTAT") == billed.fields.get("QSTAT") != ""
    assert (plain.settlement_id is None) == (guesses == "other")
    assert building.zip_code == "6010" and building.pstat is not None


async def test_a_job_of_the_other_answers_never_reports_waiting() -> None:
    from sandbox.address_service.jobs import BatchJob, progress_of

    job = BatchJob(
        token="t",
        key=MAINTENANCE,
        input_token="i",
        output_token="o",
        started_at=0.0,
        duration=10.0,
        outcome=TokenStatus.FINISHED,
        settlement_id=1,
    )
    statuses = {progress_of(job, second / 2, waiting=False).token_status for second in range(0, 21)}
    assert TokenStatus.WAITING not in statuses and {TokenStatus.NEW, TokenStatus.RUNNING} <= statuses
    ours = {progress_of(job, second / 2).token_status for second in range(0, 21)}
    assert TokenStatus.WAITING in ours


@pytest.mark.parametrize("guesses", ["ours", "other"])
async def test_a_standardized_spelling_is_given_back_as_written_under_the_other_answers(guesses: str) -> None:
    """address-service.correction-marks: a street marked 2 (spelling standardized, not corrected) comes
    back standardized (ours) or as given (the other way); a client taking over only what changed writes
    back nothing then."""
    fields = {"Prename_in": "Hans", "Name_in": "Muster", "Streetname_in": "Bahnhofstr.", "HouseNo_in": "12"}
    fields |= {"ZipCode_in": "8001", "TownName_in": "Zürich"}
    async with _client(SandboxConfig(guesses=guesses)) as client:  # type: ignore[arg-type]
        result = await client.run_query(MAINTENANCE, 9, fields)
    report = result.fields["ShortReport"] or ""
    assert report[7] == "2"
    assert result.fields["Streetname"] == ("Bahnhofstrasse" if guesses == "ours" else "Bahnhofstr.")


@pytest.mark.parametrize("guesses", ["ours", "other"])
async def test_the_assistant_lives_at_its_own_address_and_beside_the_batch_only_our_way(guesses: str) -> None:
    """address-service.assistant-url: the assistant is served at /assistant/REST/v1 either way; at the batch
    address only our way (the other: 404, never an empty result)."""
    from connectors.address_service import AutocompleteQuery
    from connectors.errors import NotFound

    config = SandboxConfig(guesses=guesses)  # type: ignore[arg-type]
    query = AutocompleteQuery("towns", zip_code="6010")
    transport = SandboxTransport(config)
    async with AddressServiceClient(
        address_assistant_url(),
        username=USER,
        password=SecretStr(PASSWORD),
        options=ClientOptions(transport=transport),
    ) as own:
        _, hits = await own.autocomplete(query)
    assert any(hit.town_name == "Kriens" for hit in hits)
    async with _client(config) as batch:
        if guesses == "ours":
            assert (await batch.autocomplete(query))[1]
        else:
            with pytest.raises(NotFound):
                await batch.autocomplete(query)
