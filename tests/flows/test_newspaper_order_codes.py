"""Every §7 content code an order can earn, earned through the order flow: the run fails naming the code, the
history keeps the service's message, and the order is recorded as refused (nothing exists, so a corrected
order may be posted at once).

Where §2.1 shows no shape (large print runs, inserts, unaddressed, military and unsorted copies, tariff
groups) the orders use the sandbox's own, documented in :mod:`sandbox.newspaper.order_models`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from connectors.newspaper import NewspaperRejected
from flows.newspaper_order import newspaper_order
from history.models import JobState
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_newspaper_order import QUICK, messages, order_body, order_jobs, write_order

Change = Callable[[dict[str, Any]], None]


def _national(body: dict[str, Any]) -> dict[str, Any]:
    return body["nationalDelivery"]  # type: ignore[no-any-return]


def _sorted(body: dict[str, Any]) -> dict[str, Any]:
    return _national(body)["sortedDelivery"]  # type: ignore[no-any-return]


def _paper(number: str, change: Change) -> Change:
    def changed(body: dict[str, Any]) -> None:
        body["basisInformation"]["newspaperNumber"] = number
        change(body)

    return changed


def _large(edition: str, weight: int) -> Change:
    return lambda body: _sorted(body).update(
        largeEditionShipments=[{"edition": edition, "weight": weight, "count": 90}]
    )


def _insert(weight: int, count: int = 100, description: str = "Prospekt") -> Change:
    insert = {"description": description, "weight": weight, "count": count}
    return lambda body: _sorted(body).update(appendixShipments=[insert])


def _unaddressed(weight: int, *, military: bool) -> Change:
    copies = [{"weight": weight, "count": 20, "military": military}]
    return lambda body: _national(body).update(unaddressedShipments=copies)


def _unsorted(weight: int, *, military: bool) -> Change:
    copies = {"unsortedShipments": [{"weight": weight, "count": 20, "military": military}]}
    return lambda body: _national(body).update(unsortedDelivery=copies)


def _tariff_group(group: int) -> Change:
    lane = {
        "productLabel": "Zeitung",
        "country": "US",
        "tariffGroup": group,
        "economyShipments": [{"weight": 180, "count": 3}],
    }
    return lambda body: body.update(internationalDelivery={"internationalShipments": [lane]})


def _gratis_insert(number: str, weight: int) -> Change:
    def changed(body: dict[str, Any]) -> None:
        body["basisInformation"]["newspaperNumber"] = number
        del body["nationalDelivery"]
        body["gratisDelivery"] = {
            "gratisShipments": [{"locationCategory": "A", "weight": 90}],
            "insertShipments": [{"description": "Beilage", "weight": weight, "count": 100}],
        }

    return changed


# code → how an order earns it (4711 takes none of the other kinds of copies, 4713 takes them all)
EARNED: dict[str, Change] = {
    "0023": _unaddressed(180, military=False),
    "0024": _unaddressed(180, military=True),
    "0033": _paper("4713", _unaddressed(5000, military=False)),
    "0034": _paper("4713", _unaddressed(5000, military=True)),
    "0040": _large("MONDAY_FRIDAY", 250),
    "0041": _large("SATURDAY", 250),
    "0042": _paper("4713", _large("MONDAY_FRIDAY", 5000)),
    "0043": _paper("4713", _large("SATURDAY", 50)),
    "0050": _paper("4713", _insert(40, count=1000)),  # the order has 165 copies
    "0051": _paper("4713", _insert(40, description="Prospekt " * 10)),
    "0052": _insert(40),
    "0053": _insert(400),
    "0054": _paper("4713", _insert(2)),
    "0055": _paper("4713", _insert(900)),
    "0070": _unsorted(180, military=False),
    "0071": _unsorted(180, military=True),
    "0072": _paper("4713", _unsorted(5000, military=False)),
    "0073": _paper("4713", _unsorted(5000, military=True)),
    "0110": _gratis_insert("5120", 20),
    "0111": _gratis_insert("5121", 200),
    "0153": _tariff_group(1),
}


@pytest.mark.parametrize("code", list(EARNED))
async def test_an_order_that_earns_a_code_fails_naming_it(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, code: str
) -> None:
    body = order_body(issue=300 + int(code))
    EARNED[code](body)
    gratis = "gratisDelivery" in body
    with pytest.raises(NewspaperRejected, match=code) as refused:
        await call(newspaper_order, write_order(tmp_path, body), tmp_path / "out", gratis=gratis, **QUICK)

    assert [message.code for message in refused.value.errors] == [code]
    assert any(m.level == "error" and m.code == code for m in messages(flow_env))
    [job] = order_jobs(flow_env)
    assert job.status == JobState.REJECTED.value


@pytest.mark.parametrize(
    "change",
    [
        _paper("4713", _large("SATURDAY", 250)),
        _paper("4713", _insert(40)),
        _paper("4713", _insert(400)),
        _paper("4713", _unaddressed(180, military=True)),
        _paper("4713", _unsorted(180, military=False)),
        _tariff_group(3),
        _gratis_insert("5121", 20),
    ],
    ids=[
        "large print run",
        "lighter insert",
        "heavier insert",
        "military",
        "unsorted",
        "tariff group",
        "gratis insert",
    ],
)
async def test_the_same_copies_within_the_newspapers_ranges_are_accepted(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, change: Change
) -> None:
    body = order_body(issue=400)
    change(body)
    gratis = "gratisDelivery" in body
    summary = await call(
        newspaper_order, write_order(tmp_path, body), tmp_path / "out", gratis=gratis, **QUICK
    )
    assert summary.status == "LOADED"
