"""Runs a batch alignment: every row through the matcher, duplicate groups (K/F) across the batch, and the
delivered output (the result file, or a ZIP with ``result.txt`` and ``moves.txt`` when moves are reported).

Duplicates: rows that resolve to the same person/company (or the same unmatched input) form a group; the
group number goes to ``Double_DoubleGroupNo``, ``K`` (the best-scoring row, the first on a tie) or ``F`` to
``Double_DSTAT``; QSTAT keeps the row's own maintenance status.
"""

from __future__ import annotations

from collections import defaultdict

from sandbox.address_service.batchfile import read_batch_input, write_moves, write_result, zip_members
from sandbox.address_service.matching import Matcher, MatchResult


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


def align_batch(content: bytes, matcher: Matcher, *, report_moves: bool) -> tuple[bytes, bool]:
    """The output file for an uploaded input; the flag tells whether it is a ZIP archive.

    Raises:
        BatchFileError: the input cannot be read.
    """
    batch = read_batch_input(content)
    results = [matcher.match(batch.record(row)) for row in batch.rows]
    mark_duplicates(results)
    result_file = write_result(batch, results)
    moves = write_moves(batch, results) if report_moves else None
    if moves is None:
        return result_file, False
    return zip_members({"result.txt": result_file, "moves.txt": moves}), True
