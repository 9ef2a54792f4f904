"""The errors the run history raises: :class:`HistoryError` and the two ways a run loses its claim on its
work (:class:`KeyBusy`, :class:`LeaseLost`). The CLI maps them to exit codes as it maps ``PostflowsError``.

``HistoryError → KeyBusy / LeaseLost``
"""

from __future__ import annotations

from typing import Any

from history.leases import LeaseHolder


class HistoryError(Exception):
    """Base of the errors the run history raises; ``exit_code`` is what the CLI exits with."""

    exit_code = 1

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception pickles as cls(*args), which fails for constructors that take other arguments.
        return _rebuild_error, (type(self), self.args, self.__dict__)


def _rebuild_error(cls: type[HistoryError], args: tuple[Any, ...], state: dict[str, Any]) -> HistoryError:
    """An unpickled error: its arguments and attributes set again, without calling its constructor."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


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
