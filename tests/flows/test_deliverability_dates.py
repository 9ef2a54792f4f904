"""The deliverability flow on explicit delivery dates: one POST deliverabilities/when per address with the
dates in its body (§4.2), the results in the layout of a range of days, the dates part of the work's
identity, and dates that cannot be used refused before anything is sent."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import httpx
import pytest
from openpyxl import load_workbook
from pydantic import ValidationError

import history
from fileio.errors import InputError
from flows.deliverability_check import deliverability_check
from flows.requests import DeliverabilityRequest
from runtime.settings import get_settings
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

ADDRESSES = """Kunde,street,houseNumber,zip,city
K1,Lindenstrasse,12,6010,Kriens
K2,Irgendweg,1,9999,Nirgendwo
"""
DATES = "2025-03-09,2025-03-03,2025-03-05"  # a Sunday, a Monday, a Wednesday
WHEN = "/deliverabilities/when"


def _input(tmp_path: Path) -> Path:
    path = tmp_path / "addresses.csv"
    path.write_text(ADDRESSES, encoding="utf-8")
    return path


class BodyKeeping(httpx.AsyncBaseTransport):
    """The sandbox transport, keeping the body of every POST deliverabilities/when."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.bodies: list[dict[str, object]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith(WHEN):
            self.bodies.append(json.loads(request.content))
        return await self.inner.handle_async_request(request)


async def test_explicit_dates_are_posted_and_the_results_keep_their_layout(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keeping = BodyKeeping(sandbox.transport)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: keeping)
    out = tmp_path / "out"
    summary = await call(deliverability_check, input_path=_input(tmp_path), output_dir=out, dates=DATES)

    assert (summary.answered, summary.not_found) == (1, 1)
    assert summary.delivery_dates == ["2025-03-03", "2025-03-05", "2025-03-09"]
    assert (summary.first_day, summary.days, summary.deliverable_days) == ("2025-03-03", 3, 2)
    assert sandbox.transport.calls[("POST", f"/commerce/api/delivery/v1{WHEN}")] == 2
    assert sandbox.transport.calls[("GET", f"/commerce/api/delivery/v1{WHEN}")] == 0
    assert keeping.bodies[0] == {
        "address": {
            "geographicLocation": {
                "house": {"street": "Lindenstrasse", "houseNumber": "12"},
                "zip": {"zip": "6010", "city": "Kriens"},
            }
        },
        "deliveryDates": ["2025-03-03", "2025-03-05", "2025-03-09"],
    }

    days = read_output_csv(out / "deliverability.csv", dtype=str, keep_default_na=False)
    kriens = days[days["Kunde"] == "K1"].set_index("date")
    assert list(kriens.index) == ["2025-03-03", "2025-03-05", "2025-03-09"]
    assert (
        kriens.loc["2025-03-09", "activity"] == "NO_SERVICE"
        and kriens.loc["2025-03-05", "deliverable"] == "yes"
    )
    unknown = days[days["Kunde"] == "K2"].iloc[0]
    assert (unknown["QueryStatus"], unknown["HttpStatus"]) == ("not found", "404")
    header = [cell.value for cell in load_workbook(out / "deliverability.xlsx")["By date"][1]]
    assert header[-3:] == ["2025-03-03 Mon", "2025-03-05 Wed", "2025-03-09 Sun"]
    report = (out / "summary.md").read_text(encoding="utf-8")
    assert "2025-03-03, 2025-03-05, 2025-03-09 (3 delivery dates given)" in report


async def test_the_dates_are_the_works_identity_whether_listed_or_in_a_file(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    source = _input(tmp_path)
    listed = await call(deliverability_check, input_path=source, output_dir=tmp_path / "a", dates=DATES)
    dates_file = tmp_path / "dates.csv"
    dates_file.write_text("date\n2025-03-05\n2025-03-03\n2025-03-09\n", encoding="utf-8")
    from_file = await call(
        deliverability_check, input_path=source, output_dir=tmp_path / "b", dates=str(dates_file)
    )
    other = await call(deliverability_check, input_path=source, output_dir=tmp_path / "c", dates="2025-03-03")
    ranged = await call(
        deliverability_check, input_path=source, output_dir=tmp_path / "d", start=dt.date(2025, 3, 3), days=1
    )

    assert listed.idempotency_key == from_file.idempotency_key
    keys = {listed.idempotency_key, other.idempotency_key, ranged.idempotency_key}
    assert len(keys) == 3
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        run = history.get_run(session, from_file.run_id)
        assert run is not None and run.parameters["dates"] == ["2025-03-03", "2025-03-05", "2025-03-09"]


async def test_a_bad_line_of_a_dates_file_is_refused_before_anything_is_sent(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    dates_file = tmp_path / "dates.txt"
    dates_file.write_text("2025-03-03\n2025-03-31\n2025-02-30\n", encoding="utf-8")
    with pytest.raises(InputError, match="dates.txt: line 3, column 1: expected a date YYYY-MM-DD"):
        await call(
            deliverability_check,
            input_path=_input(tmp_path),
            output_dir=tmp_path / "out",
            dates=str(dates_file),
        )
    assert sandbox.transport.count(WHEN) == 0


SIXTY_ONE = ",".join((dt.date(2025, 1, 1) + dt.timedelta(days=n)).isoformat() for n in range(61))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"dates": "2025-03-03", "days": 3}, "exclude a first day and a number of days"),
        ({"dates": "2025-03-03", "start": "2025-03-03"}, "exclude a first day and a number of days"),
        ({"dates": "2025-03-03,3.3.2025"}, "'3.3.2025' is not a date YYYY-MM-DD"),
        ({"dates": SIXTY_ONE}, "at most 60 delivery dates are asked about at once, got 61"),
    ],
)
def test_the_request_refuses_dates_with_a_range_a_bad_date_or_too_many(
    given: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        DeliverabilityRequest(input_path=Path("in.csv"), **given)  # type: ignore[arg-type]


def test_a_request_with_dates_and_the_default_day_count_or_none() -> None:
    given = DeliverabilityRequest(input_path=Path("in.csv"), dates=" 2025-03-03 ", days=14)
    assert given.dates == "2025-03-03"
    assert DeliverabilityRequest(input_path=Path("in.csv"), dates="", days=3).dates is None


async def test_a_file_of_secrets_as_the_dates_leaves_no_word_of_it_anywhere(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    secrets = tmp_path / "app.env"
    secrets.write_text("DB_PASSWORD=hunter2-secret\nAPI_KEY=sk-live-42\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # neither the working directory nor the data dir holds the file
    state = await call(
        deliverability_check,
        input_path=_input(tmp_path),
        output_dir=tmp_path / "out",
        dates=str(secrets),
        return_state=True,
    )
    assert state.is_failed()
    with pytest.raises(InputError) as refused:
        await state.result()
    assert str(refused.value) == f"{secrets}: line 1, column 1: expected a date YYYY-MM-DD"
    await APILogHandler.aflush()
    async with get_client() as client:
        flow_run_id = state.state_details.flow_run_id
        logs = await client.read_logs(
            log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]))
        )
        states = await client.read_flow_run_states(flow_run_id)
    assert states, "the run left no states to look at"
    texts = [str(refused.value), *(log.message for log in logs), *(item.message or "" for item in states)]
    history_db = (flow_env / "history.db").read_bytes() if (flow_env / "history.db").exists() else b""
    for word in ("DB_PASSWORD", "hunter2", "API_KEY", "sk-live"):
        assert not [text for text in texts if word in text], word
        assert word.encode() not in history_db
    assert sandbox.transport.count(WHEN) == 0
