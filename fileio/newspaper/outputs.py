"""Files every newspaper pipeline writes: JSON as received, the text of the run summary with the API's
warnings (the flow publishes it), and flat tables of nested JSON for the Excel reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from connectors.newspaper import RawResponse
from core.json_text import json_text
from fileio.documents import DocumentRejected
from fileio.files import write_received
from fileio.lazy import lazy_module
from fileio.limits import DOWNLOAD_MAX_BYTES, DOWNLOAD_MAX_BYTES_SETTING

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")


def write_json(
    directory: Path, stem: str, value: BaseModel | RawResponse | Any, *, max_bytes: int = DOWNLOAD_MAX_BYTES
) -> Path:
    """Write ``value`` to ``directory/stem.json``: a raw response byte for byte (up to ``max_bytes``), a
    model with every field it received (unknown ones included), anything else as JSON.

    Raises:
        DocumentRejected: a raw response larger than ``max_bytes``; nothing is written.
    """
    if isinstance(value, RawResponse):
        if len(value.content) > max_bytes:
            raise DocumentRejected(
                f"{stem} answer",
                f"larger than the limit of {max_bytes:,} bytes ({DOWNLOAD_MAX_BYTES_SETTING}); not written",
            )
        path = directory / f"{stem}{value.extension}"
        write_received(path, value.content)
        return path
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    path = directory / f"{stem}.json"
    write_received(path, (json_text(value, indent=2, default=str) + "\n").encode())
    return path


def key_value_frame(values: Mapping[str, Any]) -> pd.DataFrame:
    """A two-column (field, value) frame; nested values as compact JSON."""
    return pd.DataFrame(
        {
            "field": list(values),
            "value": [_cell(value) for value in values.values()],
        }
    )


def records_frame(records: Sequence[Mapping[str, Any]], columns: Sequence[str] = ()) -> pd.DataFrame:
    """One row per record, nested values as compact JSON; ``columns`` first when given."""
    frame = pd.DataFrame([{key: _cell(value) for key, value in record.items()} for record in records])
    if columns:
        frame = frame.reindex(columns=[*columns, *[c for c in frame.columns if c not in columns]])
    return frame


def item_lists(body: Any) -> list[dict[str, Any]]:
    """The items of every list of objects in a JSON object, each tagged with the list's name (``group``)."""
    rows: list[dict[str, Any]] = []
    if isinstance(body, Mapping):
        for name, value in body.items():
            if isinstance(value, list):
                rows += [{"group": name, **item} for item in value if isinstance(item, Mapping)]
    elif isinstance(body, list):
        rows += [dict(item) for item in body if isinstance(item, Mapping)]
    return rows


def warnings_frame(warnings: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({"warning": list(warnings)})


def summary_markdown(
    title: str,
    facts: Mapping[str, Any],
    warnings: Sequence[str],
    notes: Sequence[str] = (),
    *,
    errors: Sequence[str] = (),
) -> str:
    """The run summary: facts as a table, then the errors of an answer that took the submission all the
    same (when there are any), the API's warnings and any notes."""
    lines = [f"# {title}", "", "| | |", "| --- | --- |"]
    lines += [f"| {_markdown(name)} | {_markdown(value)} |" for name, value in facts.items()]
    if errors:
        lines += ["", "## Errors from the API (the submission was taken with them)", ""]
        lines += [f"- {_markdown(error)}" for error in errors]
    lines += ["", "## Warnings from the API", ""]
    lines += [f"- {_markdown(warning)}" for warning in warnings] or ["_none_"]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {_markdown(note)}" for note in notes]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> Any:
    if isinstance(value, Mapping | list):
        return json_text(value, compact=True, default=str)
    return value


def _markdown(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")
