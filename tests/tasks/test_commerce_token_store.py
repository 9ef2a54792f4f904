"""The refresh-token store's file form: private, replaced atomically, one file per service and client."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from tasks.commerce.token_store import (
    BlockTokenStore,
    FileTokenStore,
    SavedLogin,
    login_name,
    token_store,
)


def login(token: str = "rt-1") -> SavedLogin:
    return SavedLogin(SecretStr(token), "user-1", ("openid",), "2026-11-23T10:00:00+00:00")


def test_the_file_is_readable_by_its_owner_only_and_replaced_whole(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens", "commerce-login-x")
    assert store.load() is None
    store.save(login("rt-1"))
    store.save(login("rt-2"))
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) & 0o077 == 0
    loaded = store.load()
    assert loaded is not None and loaded.refresh_token.get_secret_value() == "rt-2"
    assert "rt-2" not in repr(loaded)
    assert [p.name for p in store.path.parent.iterdir()] == [store.path.name]  # no temporary file left
    assert store.clear() and not store.clear() and store.load() is None


def test_a_damaged_file_reads_as_no_sign_in(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path, "x")
    store.path.write_text("{not json")
    assert store.load() is None


def test_one_login_per_service_and_client() -> None:
    sandbox = login_name("http://sandbox.postflows.invalid/auth", "c1")
    assert sandbox != login_name("https://auth.example.ch", "c1")
    assert sandbox != login_name("http://sandbox.postflows.invalid/auth", "c2")
    assert sandbox == login_name("HTTP://sandbox.postflows.invalid/auth/", "c1")


def test_the_setting_names_the_store(tmp_path: Path) -> None:
    assert isinstance(token_store("file", tmp_path, "n"), FileTokenStore)
    block = token_store("block:shop-login", tmp_path, "n")
    assert isinstance(block, BlockTokenStore) and block.name == "shop-login"
    with pytest.raises(ValueError, match="file"):
        token_store("vault", tmp_path, "n")
    with pytest.raises(ValueError, match="block name"):
        token_store("block:Not Valid", tmp_path, "n")
