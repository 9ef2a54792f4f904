"""The run lifecycle every flow shares: open a history record, hold the work's key, close the record with
the right state; and the run summary, which lists every file the run wrote and the earlier work it took up.

Nothing a run publishes carries a registered secret: the summary artifact is scrubbed, and so is the text
of an error the run ends with (Prefect makes the run's state message from it).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from core.errors import PostflowsError
from core.redaction import redact
from fileio.files import write_received
from fileio.sandbox_marks import SUMMARY_NOTICE
from flows import heap, run_events
from flows.results import RunParked, RunResult
from history.recorder import RunRecorder, record_shielded
from runtime.run import Run
from runtime.settings import Settings
from tasks.job_waits import JobParked
from tasks.retrying import StepRetries, step_retries
from tasks.run_history import start_recording

if TYPE_CHECKING:
    from runtime.endpoints import Api

FLOW_APIS: dict[str, tuple[Api, ...]] = {
    "address-batch": ("address-service",),
    "address-query": ("address-service",),
    "cleanup": ("address-service",),
    "address-purchase": ("newspaper",),
    "newspaper-master-data": ("newspaper",),
    "newspaper-order": ("newspaper",),
    "newspaper-reports": ("newspaper",),
    "newspaper-statistics": ("newspaper",),
    "structure-files": ("newspaper",),
    "address-labels": ("commerce",),
    "address-validation": ("commerce",),
    "deliverability-check": ("commerce",),
    "delivery-reference-sync": ("commerce",),
    "logistic-product": ("commerce",),
    "pickup-points": ("commerce",),
    "pickup-registration": ("commerce",),
    "return-order": ("commerce",),
    "same-day-acceptance": ("commerce",),
}
"""The APIs each recorded flow calls (a flow that calls none, such as history-report, is not named): a run
of it is a sandbox run when one of them answers from the embedded sandbox."""


def flow_apis() -> dict[str, str]:
    """The API each recorded flow talks to (flow name → API), for the history report's figures per API; the
    deployment catalog chooses each deployment's work pool by the same API."""
    return {flow: apis[0] for flow, apis in FLOW_APIS.items()}


R = TypeVar("R", bound=RunResult)
SUMMARY_FILE = "summary.md"
INTERRUPTED = "INTERRUPTED"
CRASHED = "CRASHED"
# Earlier work named in the summary per kind; the rest is counted.
SHOWN_REUSED = 5
_LOCAL_PICTURE = re.compile(r"^!\[[^\]\n]*\]\((?![a-z][a-z0-9+.-]*://)[^)\n]+\)[ \t]*\n(?:[ \t]*\n)?", re.M)


class RunSummary(dict[str, Any]):
    """What a flow reports at its end; stored with the run.

    :meth:`publish` ends it the same way for every flow: ``files`` (every document the run recorded, as
    absolute paths, ``summary.md`` last), ``resumed`` and ``reused`` (the earlier work taken up instead of
    done again), in the returned summary, ``summary.md`` and the markdown artifact alike. ``sandbox`` says
    whether an API the run calls answers from the embedded sandbox (the recorder's outputs say the same);
    the summary of such a run opens with a notice that nothing in it may be imported.
    """

    def __init__(self, recorder: RunRecorder, **values: Any) -> None:
        super().__init__(**values)
        self.recorder = recorder
        self.is_parked = False
        self.final: RunResult | None = None
        self.setdefault("sandbox", recorder.outputs.sandbox)

    @property
    def sandbox(self) -> bool:
        """Whether the run's answers come from the embedded sandbox."""
        return bool(self.recorder.outputs.sandbox)

    async def park(self, parked: JobParked) -> RunParked:
        """End the run on a parked wait: schedule the follow-up run (:mod:`flows.parking`), record the run
        PARKED, and return its result, which says when the follow-up comes. A follow-up that cannot be
        scheduled raises (the run fails; the job stays WAITING: the same command picks it up)."""
        from prefect import get_run_logger

        from flows.parking import schedule_follow_up

        follow_up, at = await schedule_follow_up(parked)
        common = {name: self[name] for name in RunResult.model_fields if name in self}
        so_far = {name: value for name, value in self.items() if name not in RunResult.model_fields}
        self.final = RunParked(
            **common,
            parked=f"follow-up at {at.isoformat(timespec='seconds')}",
            parked_job=parked.job.remote_id,
            follow_up_run=str(follow_up),
            so_far=so_far,
        )
        await self.recorder.finish("PARKED", summary=self.final.summary())
        self.is_parked = True
        get_run_logger().info(
            "%s; follow-up run %s scheduled for %s", parked, follow_up, at.isoformat(timespec="seconds")
        )
        return self.final

    def result(self, model: type[R], **fields: Any) -> R:
        """The run's result as ``model`` says: what the run noted, with ``fields``; it is what the run
        records as its summary when it completes.

        Raises:
            pydantic.ValidationError: a value the model does not know or cannot take (a bug of the flow).
        """
        result = model.model_validate({**self, **fields})
        self.final = result
        return result

    def recorded(self) -> dict[str, Any]:
        """What the history stores and the finished event carries: the result once the flow made it."""
        return self.final.summary() if self.final is not None else dict(self)

    async def publish(self, report: str, output_dir: Path | None, *, description: str) -> Path | None:
        """Write the flow's ``report`` with the run's output files and earlier work appended to
        ``output_dir/summary.md`` (none without ``output_dir``) and, inside a flow run, as the markdown
        artifact ``<flow>-summary``; returns the summary file.

        A picture the report shows from a file beside summary.md (``![alt](qstat.png)`` on a line of its
        own) is left out of the artifact, which cannot show a file from disk: the report says the same
        in text beside it."""
        outputs = self.recorder.outputs
        path = Path(output_dir) / SUMMARY_FILE if output_dir is not None else None
        documents = dict(outputs.documents)
        if path is not None:
            documents.setdefault(path.resolve(), "summary")
        text = report.rstrip("\n") + "\n\n" + outputs_markdown(documents, outputs.reused, outputs.replaced)
        if outputs.sandbox:
            text = f"{SUMMARY_NOTICE}\n\n{text}"
        if path is not None:
            write_received(path, text.encode())  # it quotes the service's warnings
        recorded = [self.recorder.document("summary", path)] if path is not None else []
        artifact = _artifact(
            without_local_pictures(text), key=f"{self.recorder.flow}-summary", description=description
        )
        # The artifact's request beside the history's write; both end before a failure of either is raised.
        for outcome in await asyncio.gather(artifact, *recorded, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome
        self.update(
            files=[str(document) for document in documents],
            resumed=bool(outputs.reused),
            reused={what: _shown(which) for what, which in outputs.reused.items()},
        )
        if outputs.replaced:
            self.update(replaced={what: _shown(which) for what, which in outputs.replaced.items()})
        if outputs.took_up is not None:
            self.update(took_up_interrupted_run=outputs.took_up)
        return path


def without_local_pictures(markdown: str) -> str:
    """The markdown without its lines that show a picture from a file (a link that is no web address), and
    without the empty line after each."""
    return _LOCAL_PICTURE.sub("", markdown)


def outputs_markdown(
    documents: Mapping[Path, str],
    reused: Mapping[str, Sequence[str]],
    replaced: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The sections every run summary ends with: where each output file went, and what earlier work this
    run took up (and, after ``--resubmit``, which earlier submissions it sent anew over)."""
    lines = ["## Output files", ""]
    lines += [f"- `{path}` ({kind})" for path, kind in documents.items()] or ["_none_"]
    lines += ["", "## Resumed", ""]
    if reused:
        lines.append("Taken up from earlier runs instead of being done again:")
        lines.append("")
        lines += [f"- {what}: {', '.join(_shown(which))}" for what, which in reused.items()]
    else:
        lines.append("_nothing: this run did all of its work itself_")
    if replaced:
        lines += ["", "## Replaced", "", "Submitted anew over an earlier submission (--resubmit):", ""]
        lines += [f"- {what}: {', '.join(_shown(which))}" for what, which in replaced.items()]
    return "\n".join(lines) + "\n"


def _shown(which: Sequence[str]) -> list[str]:
    if len(which) <= SHOWN_REUSED:
        return list(which)
    return [*which[:SHOWN_REUSED], f"… {len(which) - SHOWN_REUSED} more"]


async def _artifact(markdown: str, *, key: str, description: str) -> None:
    from prefect.artifacts import acreate_markdown_artifact
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is not None:
        await acreate_markdown_artifact(redact(markdown), key=key, description=redact(description))


@asynccontextmanager
async def recorded_run(
    run: Run,
    *,
    idempotency_key: str | None,
    parameters: Mapping[str, Any],
    notify: Callable[[str], None] | None = None,
) -> AsyncIterator[tuple[RunRecorder, RunSummary]]:
    """Record a run that holds its idempotency key; it ends COMPLETED, FAILED (with the error), INTERRUPTED
    (Ctrl-C or a cancellation, at any point, even while the record is made), CRASHED (its process ends under
    it: ``SystemExit`` or another ``BaseException`` that is no ``Exception``), or PARKED. A completed run
    emits ``postflows.<flow>.finished``, a failed or crashed one ``postflows.<flow>.failed``
    (:mod:`flows.run_events`).

    ``run.apis`` are the APIs the run calls: when one of them answers from the embedded sandbox (its
    ``POSTFLOWS_<API>_URL`` unset), the run is a sandbox run (``recorder.outputs.sandbox``, ``"sandbox"``
    in its summary and events), and every file it writes for people says so.

    A second run with the same key waits here (bounded by ``lease_wait_s``) while a live run holds it. The
    idempotent steps of the run are retried as the settings say (:func:`tasks.retrying.step_retries`). A
    flow whose wait parks (deployment runs only) is handed :class:`~tasks.job_waits.JobParked` as the
    wait's outcome and returns :meth:`RunSummary.park`, which records the run PARKED; every error that
    leaves the block fails the run.
    """
    settings, flow = run.settings, run.flow
    policy = StepRetries(settings.task_retries, settings.task_retry_delay_s, settings.task_retry_jitter)
    starting = asyncio.ensure_future(
        start_recording(
            settings.effective_database_url, flow=flow, idempotency_key=idempotency_key, parameters=parameters
        )
    )
    try:
        recorder = await asyncio.shield(starting)
    except (asyncio.CancelledError, KeyboardInterrupt):
        # Interrupted while the run was being recorded: the record is made all the same, and closed.
        started = await starting
        await started.finish(INTERRUPTED, error="interrupted while starting")
        raise
    recorder.outputs.sandbox = run.sandbox
    summary = RunSummary(recorder, run_id=recorder.run_id)
    try:
        await recorder.hold_key(ttl_s=settings.lease_ttl_s, wait_s=settings.lease_wait_s, notify=notify)
        with step_retries(policy):
            yield recorder, summary
    except (asyncio.CancelledError, KeyboardInterrupt):
        await record_shielded(recorder.finish(INTERRUPTED, error="interrupted", summary=summary))
        raise
    except BaseException as error:
        scrub_error(error)
        reason = f"{type(error).__name__}: {error}"
        # Not an Exception (SystemExit: the process is ending under the run, e.g. its worker was killed): the
        # run did not fail, it crashed, as Prefect records it.
        await recorder.finish(
            "FAILED" if isinstance(error, Exception) else CRASHED, error=reason, summary=summary
        )
        _ended(recorder, run_events.FAILED, summary, parameters, error=reason)
        raise
    if not summary.is_parked:
        await recorder.finish("COMPLETED", summary=summary.recorded())
        _ended(recorder, run_events.FINISHED, summary, parameters)


def begin_run(flow: str, settings: Settings | None = None) -> Run:
    """The run of ``flow`` (:class:`runtime.run.Run`): its settings read once (or ``settings``), and the
    APIs it calls (:data:`FLOW_APIS`). What the flow's modules made is set aside from the collector
    (:func:`flows.heap.settle`)."""
    heap.settle()
    return Run.begin(flow, FLOW_APIS.get(flow, ()), settings)


def _ended(
    recorder: RunRecorder,
    outcome: str,
    summary: RunSummary,
    parameters: Mapping[str, Any],
    *,
    error: str | None = None,
) -> None:
    ended = run_events.EndedRun(
        recorder.flow,
        recorder.run_id,
        recorder.history_id,
        recorder.idempotency_key,
        recorder.outputs.sandbox,
    )
    run_events.run_ended(ended, outcome, summary=summary.recorded(), parameters=parameters, error=error)


def scrub_error(error: BaseException) -> None:
    """Scrub the registered secrets from the text arguments of an error that is not one of ours (ours are
    scrubbed when they are made), in place: the error goes on to be the run's state message."""
    if isinstance(error, PostflowsError):
        return
    cleaned = tuple(redact(arg) if isinstance(arg, str) else arg for arg in error.args)
    if cleaned != error.args:
        # An exception type that does not let its args be set keeps them.
        with contextlib.suppress(AttributeError, TypeError):
            error.args = cleaned
