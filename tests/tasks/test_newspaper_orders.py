"""Waiting for a newspaper order: only CONTROL is waited out unless more statuses are named, on the one poller
with a fake clock."""

from __future__ import annotations

from collections.abc import Iterator

from connectors.newspaper import ApiResult, OrderStatus
from tasks.newspaper.orders import wait_for_order, waiting_set
from tasks.polling import PollPolicy


def status(value: str) -> OrderStatus:
    return OrderStatus.model_validate({"statusValue": value, "statusDate": "2030-06-15T08:00:00+02:00"})


class FakeService:
    """Answers the status requests from a script, and keeps the fake time."""

    def __init__(self, answers: list[str]) -> None:
        self._answers: Iterator[str] = iter(answers)
        self.asked = 0
        self.now = 0.0

    async def get_order_status(self, order_id: int) -> ApiResult[OrderStatus]:
        self.asked += 1
        return ApiResult(status(next(self._answers)), ())

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


POLICY = PollPolicy(max_wait_s=100.0, min_interval_s=1.0, max_interval_s=5.0)


async def _wait(service: FakeService, statuses: list[str] | None) -> OrderStatus:
    return await wait_for_order(  # type: ignore[arg-type]
        service, 7, waiting=waiting_set(statuses), policy=POLICY, sleep=service.sleep
    )


def test_control_is_always_waited_in_and_named_statuses_are_added() -> None:
    assert waiting_set(None) == {"CONTROL"}
    assert waiting_set([]) == {"CONTROL"}
    assert waiting_set([" loaded ", "", "ON_HOLD"]) == {"LOADED", "ON_HOLD", "CONTROL"}


async def test_an_order_that_is_loaded_ends_the_wait_at_the_first_look() -> None:
    service = FakeService(["LOADED"] * 200)
    final = await _wait(service, None)
    assert final.status_value == "LOADED" and service.asked == 1 and service.now == 0.0


async def test_control_is_waited_out_whatever_follows_it() -> None:
    service = FakeService(["CONTROL", "CONTROL", "LOADED"])
    assert (await _wait(service, None)).status_value == "LOADED" and service.asked == 3


async def test_a_named_status_is_waited_in_until_another_comes() -> None:
    service = FakeService(["LOADED", "CONTROL", "LOADED", "DONE"])
    assert (await _wait(service, ["LOADED"])).status_value == "DONE" and service.asked == 4
