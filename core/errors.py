"""The root of every error postflows code raises, whatever the layer: one tree.

    PostflowsError
    ├── ApiError, LoginFailed     a remote API call or a sign-in failed (:mod:`connectors.errors`)
    ├── InputError, ...           a file cannot be used (:mod:`fileio.errors`)
    └── HistoryError              the run history refused (:mod:`history.errors`)

Each layer and each API package subclasses it with its own errors and keeps its own code tables; this
package holds only the root.

Every error's text is scrubbed of the registered secrets when it is built (:mod:`core.redaction`), so
whatever it quotes, no log, history row, state message or output line receives a password from it.

Every error survives pickling with its attributes (a task on another process's worker raises it, and the
flow that waits for the task receives it), whatever its constructor's arguments.
"""

from __future__ import annotations

from typing import Any

from core.redaction import redact


class PostflowsError(Exception):
    """Base of every error raised by postflows code; its text never holds a registered secret (see
    :mod:`core.redaction`), whatever it quotes."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(arg) if isinstance(arg, str) else arg for arg in args))

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception pickles as cls(*args), which fails for keyword-only constructor arguments (api=...).
        return _rebuild_error, (type(self), self.args, self.__dict__)


def _rebuild_error(cls: type[PostflowsError], args: tuple[Any, ...], state: dict[str, Any]) -> PostflowsError:
    """An unpickled error: its arguments and attributes set again, without calling its constructor."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error
