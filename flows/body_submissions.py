"""What the commerce flows that post the JSON bodies a user supplies share (address labels, return orders):
the run (one at a time per service), reading the bodies and posting each once on one client, and its end
(files recorded, the summary published, the run failed while a body's outcome is uncertain)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.commerce import CommerceClient
from fileio.commerce.json_bodies import JsonBody, read_json_bodies
from fileio.commerce.kept_answers import KeptAnswers
from flows.runs import RunSummary, recorded_run
from history.identity import named_key
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.commerce.json_submissions import (
    BodyOutcome,
    BodyStatus,
    Sender,
    SubmissionsUncertain,
    Submitted,
    submit_bodies,
)

ANSWERS_FOLDER = "answers"
"""Below the data dir: where the answers are kept, per kind (:mod:`fileio.commerce.kept_answers`)."""


@dataclass
class BodyRun:
    """A run posting the bodies of one kind (``submitted``)."""

    run: Run
    recorder: RunRecorder
    summary: RunSummary
    submitted: Submitted

    @property
    def kept(self) -> KeptAnswers:
        """Where the answers are kept (read back no further than an answer is read)."""
        settings = self.run.settings
        root = settings.data_dir / ANSWERS_FOLDER / self.submitted.kind
        return KeptAnswers(root, max_bytes=settings.response_max_bytes)

    async def post(
        self,
        input_path: Path,
        send_of: Callable[[CommerceClient], Sender],
        *,
        resubmit: bool,
        concurrency: int = 1,
    ) -> tuple[list[JsonBody], list[BodyOutcome]]:
        """Read the bodies of ``input_path`` (nothing is sent when one cannot be used) and post each once
        with ``send_of(client)``; the bodies and their outcomes, in file order."""
        submitted = self.submitted
        async with self.recorder.step("read input"):
            bodies = read_json_bodies(input_path, what=f"{submitted.what} request")
        self.summary.update(requests=len(bodies))
        kept = self.kept
        async with self.run.commerce(self.recorder.request_log) as client:
            outcomes = await submit_bodies(
                send_of(client),
                self.recorder,
                bodies,
                submitted=submitted,
                endpoint=self.run.endpoint("commerce"),
                kept=kept,
                resubmit=resubmit,
                concurrency=concurrency,
            )
        return bodies, outcomes

    async def end(
        self,
        outcomes: Sequence[BodyOutcome],
        files: Sequence[Path],
        *,
        counts: Mapping[str, int],
        report: str,
        output_dir: Path,
        description: str,
    ) -> dict[str, Any]:
        """Record the files (the index first), put the ``counts`` per status into the summary, publish it
        and return it.

        Raises:
            SubmissionsUncertain: a body was sent and its answer never arrived (the files are written).
        """
        submitted = self.submitted
        for number, path in enumerate(files):
            kind = "index" if number == 0 else path.suffix.lstrip(".") or "answer"
            await self.recorder.document(f"{submitted.kind}-{kind}", path)
        self.summary.update(statuses=dict(counts), index=str(files[0].resolve()))
        await self.summary.publish(report, output_dir, description=description)
        uncertain = [outcome for outcome in outcomes if outcome.status is BodyStatus.UNCERTAIN]
        if uncertain:
            raise SubmissionsUncertain(submitted.what, uncertain, str(files[0]), submitted.hint)
        return dict(self.summary)


@asynccontextmanager
async def body_run(
    run: Run, submitted: Submitted, *, parameters: Mapping[str, Any]
) -> AsyncIterator[BodyRun]:
    """The recorded ``run`` posting the bodies; runs of one flow against one service go one at a time (each
    body has its own key below the run's)."""
    key = named_key(run.flow, endpoint=run.endpoint("commerce"))
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        yield BodyRun(run, recorder, summary, submitted)
