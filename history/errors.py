"""The errors the run history raises: :class:`HistoryError` and the two ways a run loses its claim on its
work (:class:`KeyBusy`, :class:`LeaseLost`). Each is a ``PostflowsError`` (:mod:`core.errors`): one error
tree, its texts scrubbed of the registered secrets and its attributes kept through pickling as every other's.

``PostflowsError → HistoryError → KeyBusy / LeaseLost``
"""

from __future__ import annotations

from core.errors import PostflowsError
from history.leases import LeaseHolder


class HistoryError(PostflowsError):
    """Base of the errors the run history raises; ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class KeyBusy(HistoryError):
    """Another live run holds the idempotency key and did not let go within the allowed wait."""

    def __init__(self, key: str, holder: LeaseHolder, waited_s: float) -> None:
        super().__init__(
            f"key {key} is held by run {holder.run_id} (process {holder.pid} on {holder.host}, since "
            f"{holder.acquired_at:%Y-%m-%d %H:%M:%S} UTC); waited {waited_s:.0f}s. Run again when it has "
            "finished: the run history then resumes its work"
        )
        self.key = key
        self.holder = holder


class LeaseLost(HistoryError):
    """This run no longer holds its idempotency key (it was presumed dead); nothing more is submitted."""
