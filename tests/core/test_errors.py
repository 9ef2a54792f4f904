"""One error tree: the error of every layer is a ``PostflowsError`` (core/errors.py), so one ``except``
catches each of ours, each one's text is scrubbed as it is made and each one survives pickling."""

from __future__ import annotations

import pickle

import pytest

from connectors.errors import ApiError, LoginFailed
from core.errors import PostflowsError
from core.redaction import REDACTED, register_secret
from fileio.errors import InputError
from history.errors import HistoryError, KeyBusy, LeaseLost
from tests.history.test_errors import HOLDER

PASSWORD = "Core-Tree-Secret 31"


@pytest.mark.parametrize("root", [ApiError, LoginFailed, InputError, HistoryError])
def test_every_layers_error_root_is_a_postflows_error(root: type[Exception]) -> None:
    assert issubclass(root, PostflowsError)


def test_a_history_error_is_scrubbed_as_it_is_made_and_pickles_with_its_attributes() -> None:
    register_secret(PASSWORD)
    lost = LeaseLost(f"run 7 no longer holds key {PASSWORD}")
    assert PASSWORD not in str(lost) and str(lost).endswith(REDACTED)
    busy = pickle.loads(pickle.dumps(KeyBusy("key-1", HOLDER, 60.0)))
    assert isinstance(busy, PostflowsError) and busy.holder == HOLDER and busy.exit_code == 1
