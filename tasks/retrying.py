"""Prefect task retries for idempotent steps: downloads, reads of reports, documents and master data, deletes,
a status read outside a wait (a wait's looks are plain calls, the wait their retry: :mod:`tasks.polling`).
One decorator gives every such step the same condition; :func:`run_step` runs it with the policy of the flow
run in progress (:func:`step_retries`, set from the settings by ``flows.runs``), each call a copy of the step
with that policy (``Task.with_options``), so no run changes what another run sees.

Two layers, one concern each: the HTTP core retries a transient failure within seconds (a blip); a step
decorated here is retried as a whole, minutes apart with exponential waits and jitter, when a transient typed
error (``ApiError.retryable``) outlasted those (an outage), and the UI shows it AwaitingRetry. Anything else
fails at once: a refusal, bad credentials, a file that cannot be read. Submissions (runbatch, uploads, order
and purchase POSTs, statistics, pickup registrations, billed individual queries) are never decorated here:
whether they may be sent again is the submit-once protocol's decision (:mod:`tasks.submission`; for the
queries, their checkpoint's), not a retry's.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State, TaskRun
from prefect.tasks import exponential_backoff

from connectors.errors import ApiError

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class StepRetries:
    """How an idempotent step is retried.

    Attributes:
        retries: retries after the first attempt (0 disables them).
        delay_s: the wait before the first retry, doubled for each further one.
        jitter: random spread of each wait, as a fraction of it (Prefect's ``retry_jitter_factor``).
    """

    retries: int = 5
    delay_s: float = 10.0
    jitter: float = 0.5

    def delays(self) -> list[float]:
        """The wait before each retry, in seconds."""
        return exponential_backoff(self.delay_s)(self.retries)


DEFAULT_STEP_RETRIES = StepRetries()
_policy: ContextVar[StepRetries] = ContextVar("postflows_step_retries", default=DEFAULT_STEP_RETRIES)
"""The policy of the run in progress (each flow run sets its own, from its settings)."""


def transient_failure(task: Task[..., Any], task_run: TaskRun, state: State[Any]) -> bool:
    """The retry condition of every idempotent step: the step failed with a typed error that says trying
    again may help (a 5xx, 429, transport failure or unreadable answer that outlasted the HTTP retries)."""
    error = state.data
    return isinstance(error, ApiError) and error.retryable


def idempotent_step(
    name: str,
) -> Callable[[Callable[P, R]], Task[P, R]]:
    """Make a function an idempotent step: a Prefect task retried on transient failures (see the module).

    Only for steps that change nothing remotely, or whose repetition changes nothing more (a delete). Run
    it with :func:`run_step`, which gives it the retries of the run in progress.
    """

    def decorate(fn: Callable[P, R]) -> Task[P, R]:
        return with_retries(
            task(name=name, cache_policy=NO_CACHE, retry_condition_fn=transient_failure)(fn),
            DEFAULT_STEP_RETRIES,
        )

    return decorate


def with_retries(step: Task[P, R], policy: StepRetries) -> Task[P, R]:
    """``step`` retried as ``policy`` says (a copy: the step itself is left as it is)."""
    return step.with_options(
        retries=policy.retries,
        retry_delay_seconds=policy.delays(),
        retry_jitter_factor=policy.jitter,
    )


@contextmanager
def step_retries(policy: StepRetries) -> Iterator[StepRetries]:
    """Within the block (a flow run), every step run with :func:`run_step` is retried as ``policy`` says."""
    token = _policy.set(policy)
    try:
        yield policy
    finally:
        _policy.reset(token)


def current_step_retries() -> StepRetries:
    """The policy steps run with now."""
    return _policy.get()


async def run_step(step: Task[P, Coroutine[Any, Any, R]], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run an async step as a task run (retried as the run's policy says, visible in the UI) inside a flow or
    task run; outside one (unit tests, benchmarks) call its function, so nothing needs a Prefect server."""
    if in_run():
        return await with_retries(step, current_step_retries())(*args, **kwargs)
    return await step.fn(*args, **kwargs)


def in_run() -> bool:
    """Whether this is inside a flow or task run."""
    from prefect.context import FlowRunContext, TaskRunContext

    return FlowRunContext.get() is not None or TaskRunContext.get() is not None
