"""Address labels (barcode sub-API, §4.4; fields not shown, §2.13): the label requests a user supplies, each
created once (:mod:`tasks.commerce.json_submissions`), and what their answers become: the labels as PDF files
(:mod:`fileio.commerce.label_answers`), each JSON answer as received, and the index of them all."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import PostflowsError
from fileio.commerce.json_bodies import JsonBody
from fileio.commerce.kept_answers import KeptAnswers
from fileio.commerce.label_answers import file_names, label_content, label_id_of, write_label_files
from fileio.lazy import lazy_module
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, write_csv
from tasks.commerce.json_submissions import (
    BodyOutcome,
    BodyStatus,
    Submitted,
    index_row,
    submissions_summary,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

KIND = "address-label"
INDEX_FILE = "labels.csv"
INDEX_COLUMNS = ("position", "line", "key", "labelId", "pdf", "answer", "status", "message")
NO_PDF = "no pdf"
STATUSES = (*(str(status) for status in BodyStatus), NO_PDF)

LABELS = Submitted(
    kind=KIND,
    what="address label",
    hint="check with the barcode service whether the label was created",
    id_of=label_id_of,
)


def write_labels(
    outcomes: Sequence[BodyOutcome],
    bodies: Sequence[JsonBody],
    output_dir: Path,
    *,
    pdf_field: str,
    setting: str,
    kept: KeptAnswers,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> tuple[pd.DataFrame, list[Path]]:
    """Write each label's files (``label-<n>.pdf``, ``label-<n>.json`` as received) and ``labels.csv``, one
    line per request: its position and line in the file, its key, the label's id, the PDF and answer files,
    the status (``no pdf``: created, but its answer holds no PDF at ``pdf_field``) and a message. The answer
    as received is the file ``kept`` holds (:meth:`~fileio.commerce.kept_answers.KeptAnswers.place`), never
    a second copy. Returns the index and every file written, the index first."""
    lines = {body.position: body.line for body in bodies}
    rows = []
    written: list[Path] = []
    for outcome in outcomes:
        row = index_row(outcome, lines[outcome.position], id_column="labelId") | {"pdf": ""}
        if outcome.status in (BodyStatus.CREATED, BodyStatus.RESUMED):
            row |= _label_files(outcome, output_dir, pdf_field, setting, kept, written)
        rows.append(row)
    index = pd.DataFrame(rows, columns=list(INDEX_COLUMNS))
    return index, [write_csv(index, output_dir / INDEX_FILE, style=csv_style), *written]


def _label_files(
    outcome: BodyOutcome,
    output_dir: Path,
    pdf_field: str,
    setting: str,
    kept: KeptAnswers,
    written: list[Path],
) -> dict[str, str]:
    """The index fields of a created label, its files written (added to ``written``)."""
    answer = outcome.answer(kept)
    if answer is None:
        return {"status": NO_PDF}
    content = label_content(answer, pdf_field=pdf_field, setting=setting)
    answer_path, pdfs = write_label_files(
        output_dir,
        f"label-{outcome.position}",
        content,
        place_answer=lambda path, _data: kept.place(outcome.key, answer, path),
    )
    written += [*pdfs, *([answer_path] if answer_path is not None else [])]
    fields = {
        "labelId": outcome.answer_id or content.label_id,
        "pdf": file_names(pdfs),
        "answer": answer_path.name if answer_path is not None else "",
    }
    if not pdfs:
        fields |= {"status": NO_PDF, "message": "; ".join(filter(None, [content.problem, outcome.message]))}
    return fields


class LabelsWithoutPdf(PostflowsError):
    """Labels were created, but their answers hold no PDF where ``setting`` says (the guess
    ``commerce.label-answer``): the run ends failed naming the setting, never green without its PDFs. The
    labels are recorded and their answers kept, so a run with the right setting writes the PDFs without
    creating them again."""

    def __init__(self, count: int, pdf_field: str, setting: str, index: str) -> None:
        super().__init__(
            f"{count} label(s) created without a PDF at {pdf_field}: the answers are kept ({index}); set "
            f"{setting} to where your service puts the label and run the same command again (nothing is "
            "created twice)"
        )
        self.count = count
        self.setting = setting


def label_counts(index: pd.DataFrame) -> dict[str, int]:
    """Labels per status, every status named."""
    counts = index["status"].value_counts()
    return {status: int(counts.get(status, 0)) for status in STATUSES}


def labels_summary(source: str, index: pd.DataFrame, *, service: str, pdf_field: str) -> str:
    """The run's markdown summary: labels per status and the requests to look at (no body content)."""
    return submissions_summary(
        f"Address labels {source}",
        index,
        counts=label_counts(index),
        service=service,
        note=f"PDFs are taken from a PDF answer, or from the base64 at `{pdf_field}` of a JSON answer.",
        index_file=INDEX_FILE,
    )
