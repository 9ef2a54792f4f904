"""Long waits hold no worker: a deployment run that would wait long for its remote job parks the wait,
schedules a follow-up run of its own deployment for when the job is expected to end, and ends.

The follow-up is an ordinary flow run of the same deployment with the same parameters. It holds the same
idempotency key, so the run history hands it the recorded WAITING job (``submit_once`` resumes, it never
submits again); it goes on waiting where the parked run stopped (the deadline counts from the first wait),
then downloads and cleans up, or parks once more. Its Prefect idempotency key is derived from the job and
how often it parked, so a parked run that is retried or restarted schedules no second follow-up.

Why a scheduled follow-up and not Prefect's pause/suspend: a suspended run resumes only when someone resumes
it (or fails at its timeout); nothing resumes it at a time of its own choosing. A follow-up scheduled on the
deployment runs at the expected time by itself, shows in the UI with that time, and needs no worker until it
is due. The parked run ends Completed with its summary saying when the follow-up comes; the run history
records it PARKED.

A plain CLI run (no deployment) never parks: there is nothing to schedule a follow-up on, so it waits
in-process as before.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from flows.requests import PollingOptions
from runtime.settings import Settings
from tasks.job_waits import JobParked
from tasks.polling import PollPolicy

FOLLOW_UP_TAG = "follow-up"


def deployment_id() -> UUID | None:
    """The deployment the current flow run belongs to; None outside a deployment run."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        return None
    return context.flow_run.deployment_id


def park_after(settings: Settings) -> float | None:
    """The parking threshold of this run's waits: the setting in a deployment run, None outside one."""
    return settings.park_after_s if deployment_id() is not None else None


def follow_up_key(parked: JobParked) -> str:
    """The Prefect idempotency key of the follow-up run: the parked job and how often it parked."""
    job = parked.job
    return f"postflows-parked:{job.api}:{job.kind}:{job.remote_id}:{parked.count}"


async def schedule_follow_up(parked: JobParked) -> tuple[UUID, datetime]:
    """Schedule the run that continues the parked wait: this run's deployment, with this run's parameters,
    at the time the job is expected to end. Returns the follow-up's flow run id and start time.

    Raises:
        RuntimeError: not a deployment run (only those park).
    """
    from prefect.context import FlowRunContext
    from prefect.deployments import arun_deployment

    context = FlowRunContext.get()
    deployment = deployment_id()
    if context is None or context.flow_run is None or deployment is None:
        raise RuntimeError("only a deployment run can schedule its follow-up")
    follow_up = await arun_deployment(
        deployment,
        parameters=dict(context.flow_run.parameters),
        scheduled_time=parked.resume_at,
        timeout=0,
        tags=[FOLLOW_UP_TAG],
        idempotency_key=follow_up_key(parked),
        as_subflow=False,
    )
    return follow_up.id, parked.resume_at


def poll_policy(polling: PollingOptions, settings: Settings) -> PollPolicy:
    """How a run polls its remote job: the request's waits, parked after the settings' time in a
    deployment run."""
    return PollPolicy(
        polling.max_wait_s,
        polling.min_poll_interval_s,
        polling.max_poll_interval_s,
        park_after_s=park_after(settings),
    )
