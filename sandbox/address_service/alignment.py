"""Runs a batch alignment: every row through the matcher, duplicate groups (K/F) across the batch, and the
delivered output (the result file, or a ZIP with ``result.txt`` and ``moves.txt`` when moves are reported;
for an aligned key also its extra outputs, the moves among them when it declares an output for them).

Duplicates: rows that resolve to the same person/company (or the same unmatched input) form a group; the
group number goes to ``Double_DoubleGroupNo``, ``K`` (the best-scoring row, the first on a tie) or ``F`` to
``Double_DSTAT``; QSTAT keeps the row's own maintenance status.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sandbox.address_service.aligned_input import read_aligned_input
from sandbox.address_service.alignments import SandboxAlignment
from sandbox.address_service.batchfile import (
    OURS_OUTPUT_FORMAT,
    OutputFormat,
    empty_moves_file,
    read_batch_input,
    write_moves,
    write_moves_file,
    write_result,
    zip_members,
)
from sandbox.address_service.extra_outputs import write_extra_outputs
from sandbox.address_service.matching import Matcher, MatchResult, keep_standardized_as_given


def mark_duplicates(results: list[MatchResult]) -> None:
    """Fill the duplicate fields of rows that occur more than once."""
    groups: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for index, result in enumerate(results):
        if result.qstat:
            groups[result.identity()].append(index)
    group_no = 0
    for members in groups.values():
        if len(members) < 2:
            continue
        group_no += 1
        original = max(members, key=lambda i: (results[i].score, -i))
        for index in members:
            output = results[index].output
            output["Double_DoubleGroupNo"] = str(group_no)
            output["Double_DSTAT"] = "K" if index == original else "F"


@dataclass
class BatchOutput:
    """What a batch delivers: the output file (``is_zip`` when it is an archive) and the extra outputs of an
    aligned key by replace item."""

    content: bytes
    is_zip: bool = False
    extras: dict[str, bytes] = field(default_factory=dict)


def align_batch(
    content: bytes,
    matcher: Matcher,
    *,
    report_moves: bool,
    key: str = "",
    alignment: SandboxAlignment | None = None,
    output: OutputFormat = OURS_OUTPUT_FORMAT,
    standardized_as_given: bool = False,
) -> BatchOutput:
    """The output of a batch for an uploaded input; with an ``alignment`` (the one ``key`` selects) the input
    must have its layout, and the moves go to its declared output rather than into the ZIP.

    Raises:
        BatchFileError: the input cannot be read (:class:`AlignmentMismatch`: it breaks the alignment).
    """
    batch = read_batch_input(content) if alignment is None else read_aligned_input(content, key, alignment)
    results = [matcher.match(batch.record(row)) for row in batch.rows]
    if standardized_as_given:
        results = [keep_standardized_as_given(result) for result in results]
    mark_duplicates(results)
    result_file = write_result(batch, results, output)
    if alignment is not None and alignment.moves_item is not None:
        moves_file = write_moves_file(batch, results) if report_moves else empty_moves_file(batch)
        extras = write_extra_outputs(alignment, key, results, moves_file)
        return BatchOutput(result_file, extras=extras)
    extras = write_extra_outputs(alignment, key, results, None) if alignment is not None else {}
    moves = write_moves(batch, results, output) if report_moves else None
    if moves is None:
        return BatchOutput(result_file, extras=extras)
    return BatchOutput(zip_members({"result.txt": result_file, "moves.txt": moves}), True, extras)
