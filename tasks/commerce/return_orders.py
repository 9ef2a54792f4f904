"""Return orders (v2 sub-API, §4.4; fields not shown, §2.13): the orders a user supplies, each created once
(:mod:`tasks.commerce.json_submissions`), each answer written as received, and the index of them all."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.json_text import json_text
from fileio.commerce.json_bodies import JsonBody
from fileio.commerce.kept_answers import KeptAnswers
from fileio.lazy import lazy_module
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, write_csv
from tasks.commerce.json_submissions import (
    BodyOutcome,
    Submitted,
    id_field,
    index_row,
    status_counts,
    submissions_summary,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

KIND = "return-order"
INDEX_FILE = "return-orders.csv"
INDEX_COLUMNS = ("position", "line", "key", "orderId", "answer", "status", "message")
ANSWER_SHOWN_CHARS = 1000
ORDERS_IN_SUMMARY = 20

RETURN_ORDERS = Submitted(
    kind=KIND,
    what="return order",
    hint="check with the return order service whether the order exists",
    id_of=id_field,
)


def write_return_orders(
    outcomes: Sequence[BodyOutcome],
    bodies: Sequence[JsonBody],
    output_dir: Path,
    *,
    kept: KeptAnswers,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> tuple[pd.DataFrame, list[Path]]:
    """Write each answer as received (``return-order.json`` for a file of one order, else
    ``return-order-<n>.json``; ``.bin`` for an answer that is not JSON) and ``return-orders.csv``, one line
    per order; each answer is the file ``kept`` holds, never a second copy. Returns the index and every file
    written, the index first."""
    lines = {body.position: body.line for body in bodies}
    rows = []
    written: list[Path] = []
    for outcome in outcomes:
        row = index_row(outcome, lines[outcome.position], id_column="orderId")
        answer = outcome.answer(kept)
        if answer is not None:
            stem = "return-order" if len(bodies) == 1 else f"return-order-{outcome.position}"
            extension = "json" if _json(answer.content) is not None else "bin"
            path = output_dir / f"{stem}.{extension}"
            kept.place(outcome.key, answer, path)
            written.append(path)
            row["answer"] = path.name
        rows.append(row)
    index = pd.DataFrame(rows, columns=list(INDEX_COLUMNS))
    return index, [write_csv(index, output_dir / INDEX_FILE, style=csv_style), *written]


def return_orders_summary(
    source: str, outcomes: Sequence[BodyOutcome], index: pd.DataFrame, *, service: str
) -> str:
    """The run's markdown summary: orders per status and the orders to look at (no order content)."""
    return submissions_summary(
        f"Return orders {source}",
        index,
        counts=status_counts(outcomes),
        service=service,
        note=f"Each answer as received is in the file {INDEX_FILE} names for it.",
        index_file=INDEX_FILE,
    )


def orders_in_summary(outcomes: Sequence[BodyOutcome], kept: KeptAnswers) -> list[dict[str, Any]]:
    """The first orders as the run summary names them: position, status, and the order's id, or (without
    one) its answer (as ``kept`` holds it) as compact JSON text."""
    shown: list[dict[str, Any]] = []
    for outcome in outcomes[:ORDERS_IN_SUMMARY]:
        entry: dict[str, Any] = {"position": outcome.position, "status": str(outcome.status)}
        if outcome.answer_id:
            entry["id"] = outcome.answer_id
        elif (answer := outcome.answer(kept)) is not None:
            entry["answer"] = _compact(answer.content)
        shown.append(entry)
    return shown


def _json(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None


def _compact(content: bytes) -> str:
    body = _json(content)
    text = content.decode("utf-8", "replace") if body is None else json_text(body, compact=True)
    return text if len(text) <= ANSWER_SHOWN_CHARS else text[: ANSWER_SHOWN_CHARS - 1] + "…"
