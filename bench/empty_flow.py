"""The empty flow the worker benchmarks run beside the project's flows: what a deployment run costs when
the flow does nothing (Prefect's own cost of a run on a process worker)."""

from prefect import flow


@flow
def empty() -> None:
    """Does nothing."""
