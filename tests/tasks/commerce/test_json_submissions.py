"""The keys of user-supplied bodies (each body once, two identical bodies two requests, a reordered file the
same work), the id in an answer, and what an uncertain submission tells the user (and its exit code)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from connectors.commerce import ReceivedAnswer
from fileio.commerce.json_bodies import JsonBody
from fileio.commerce.kept_answers import KeptAnswers
from history.identity import Endpoint
from tasks.commerce.json_submissions import BodyOutcome, BodyStatus, SubmissionsUncertain, body_keys, id_field

ENDPOINT = Endpoint(base_url="https://api.example.test", user="client")


def bodies(*items: dict[str, object]) -> list[JsonBody]:
    return [JsonBody(position, position, item) for position, item in enumerate(items, start=1)]


def test_identical_bodies_are_two_pieces_of_work_and_order_does_not_matter() -> None:
    a, b = {"item": {"itemID": "1"}}, {"item": {"itemID": "2"}}
    keys = body_keys(bodies(a, b, a), kind="address-label", endpoint=ENDPOINT)
    assert len(set(keys)) == 3 and all(key.startswith("address-label:") for key in keys)
    reordered = body_keys(bodies(b, a, {"item": {"itemID": "1"}}), kind="address-label", endpoint=ENDPOINT)
    assert reordered == [keys[1], keys[0], keys[2]]
    # Key order and spacing of a body do not count; the kind and the service do.
    assert body_keys(bodies({"b": 1, "a": 2}), kind="k", endpoint=ENDPOINT) == body_keys(
        bodies({"a": 2, "b": 1}), kind="k", endpoint=ENDPOINT
    )
    other = Endpoint(base_url="https://other.example.test", user="client")
    assert body_keys(bodies(a), kind="k", endpoint=ENDPOINT) != body_keys(bodies(a), kind="k", endpoint=other)


def test_the_id_of_an_answer() -> None:
    assert id_field(ReceivedAnswer(b'{"id": "RO-1"}')) == "RO-1"
    assert id_field(ReceivedAnswer(b'{"id": 42}')) == "42"
    for content in (b'{"id": true}', b'{"id": ""}', b'{"orderId": "x"}', b"[1]", b"%PDF-1.4"):
        assert id_field(ReceivedAnswer(content)) is None


def test_an_uncertain_submission_names_the_positions_why_and_how_to_go_on() -> None:
    outcomes = [
        BodyOutcome(
            2,
            "k2",
            BodyStatus.UNCERTAIN,
            message="the request (commerce: HTTP 503) got no answer …: it may exist; x",
        ),
        BodyOutcome(5, "k5", BodyStatus.UNCERTAIN, message="an earlier run's request got no answer"),
    ]
    error = SubmissionsUncertain("return order", outcomes, "out/return-orders.csv", "check with the service")
    text = str(error)
    assert text.startswith(
        "2 return order(s) may have been created although no answer arrived (positions 2, 5;"
    )
    assert "return order 2: the request (commerce: HTTP 503) got no answer …;" in text
    assert text.endswith(
        "Check with the service, then run the same command again with --resubmit to send them again"
    )
    assert error.positions == [2, 5]
    assert error.exit_code == 1  # this run's request got no answer: the work failed


def test_bodies_uncertain_since_an_earlier_run_stop_the_run_with_exit_2() -> None:
    earlier = BodyOutcome(1, "k1", BodyStatus.UNCERTAIN, message="an earlier run's request", sent_before=True)
    now = BodyOutcome(2, "k2", BodyStatus.UNCERTAIN, message="the request (commerce: HTTP 503)")
    assert SubmissionsUncertain("address label", [earlier], "labels.csv", "check").exit_code == 2
    # The run after an uncertain submission exits 2 even when a request of its own lost its answer too.
    assert SubmissionsUncertain("address label", [earlier, now], "labels.csv", "check").exit_code == 2
    assert SubmissionsUncertain("address label", [now], "labels.csv", "check").exit_code == 1


def test_an_outcome_holds_no_answer_and_reads_it_from_where_it_is_kept(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "answers")
    record, _ = kept.keep("address-label:k1", ReceivedAnswer(b'{"id": "L-1"}', "application/json"))
    outcome = BodyOutcome(1, "address-label:k1", BodyStatus.CREATED, True, record, "L-1")
    assert not any(
        isinstance(value, bytes | ReceivedAnswer) for value in dataclasses.astuple(outcome)
    )  # a run of many labels holds one answer at a time
    answer = outcome.answer(kept)
    assert answer is not None and answer.content == b'{"id": "L-1"}'
    assert BodyOutcome(2, "address-label:k2", BodyStatus.REFUSED).answer(kept) is None
    kept.path("address-label:k1").write_bytes(b'{"id": "changed"}')
    assert outcome.answer(kept) is None  # not the answer recorded
