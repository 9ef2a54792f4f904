"""Where a signed-in user's refresh token is kept between runs: a JSON file readable by its owner only
(0600) in the data directory, or a Prefect Secret block. One login per service (auth URL and client id), so a
sandbox login is never offered to the real service.

The refresh token is stored and read as a ``SecretStr``; it never reaches a log, an artifact or the run
history. A rotated refresh token replaces the stored one at once (:meth:`TokenStore.save`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from pydantic import SecretStr

from core.json_text import json_text
from fileio.files import make_dirs, write_bytes

PRIVATE = 0o600


@dataclass(frozen=True)
class SavedLogin:
    """A stored sign-in: the refresh token and what identifies it (never the token itself)."""

    refresh_token: SecretStr
    subject: str | None
    scopes: tuple[str, ...]
    saved_at: str


class TokenStore(Protocol):
    """Keeps one refresh token for one service."""

    where: str

    def load(self) -> SavedLogin | None: ...

    def save(self, login: SavedLogin) -> None: ...

    def clear(self) -> bool: ...


def login_name(auth_url: str, client_id: str) -> str:
    """A file or block name for the login of ``client_id`` at ``auth_url`` (no secret in it)."""
    digest = hashlib.sha256(f"{auth_url.rstrip('/').lower()}|{client_id}".encode()).hexdigest()[:12]
    return f"commerce-login-{digest}"


def _record(login: SavedLogin) -> dict[str, Any]:
    return {
        "refresh_token": login.refresh_token.get_secret_value(),
        "subject": login.subject,
        "scopes": list(login.scopes),
        "saved_at": login.saved_at,
    }


def _login(record: Any) -> SavedLogin | None:
    if not isinstance(record, dict) or not isinstance(record.get("refresh_token"), str):
        return None
    return SavedLogin(
        refresh_token=SecretStr(record["refresh_token"]),
        subject=record.get("subject"),
        scopes=tuple(record.get("scopes") or ()),
        saved_at=str(record.get("saved_at", "")),
    )


def now_text() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class FileTokenStore:
    """The login in ``<dir>/<name>.json``, mode 0600, replaced atomically."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / f"{name}.json"
        self.where = str(self.path)

    def load(self) -> SavedLogin | None:
        try:
            return _login(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def save(self, login: SavedLogin) -> None:
        make_dirs(self.path.parent)
        os.chmod(self.path.parent, 0o700)
        write_bytes(
            self.path, json_text(_record(login), ascii_only=True).encode("utf-8"), durable=True, mode=PRIVATE
        )

    def clear(self) -> bool:
        existed = self.path.exists()
        self.path.unlink(missing_ok=True)
        return existed


class BlockTokenStore:
    """The login in a Prefect Secret block (stored encrypted by the Prefect server)."""

    def __init__(self, name: str) -> None:
        if not re.fullmatch(r"[a-z0-9-]+", name):
            raise ValueError(f"block name {name!r}: use lower-case letters, digits and dashes")
        self.name = name
        self.where = f"Prefect Secret block {name!r}"

    def load(self) -> SavedLogin | None:
        from prefect.blocks.system import Secret

        try:
            block = cast(Secret[Any], Secret.load(self.name, _sync=True))  # type: ignore[call-arg]
        except ValueError:  # no such block
            return None
        value = block.get()
        return _login(value if isinstance(value, dict) else json.loads(str(value)))

    def save(self, login: SavedLogin) -> None:
        from prefect.blocks.system import Secret

        Secret(value=_record(login)).save(self.name, overwrite=True, _sync=True)  # type: ignore[call-arg]

    def clear(self) -> bool:
        from prefect.blocks.system import Secret
        from prefect.exceptions import ObjectNotFound

        try:
            Secret.delete(self.name, _sync=True)  # type: ignore[call-arg]
        except (ValueError, ObjectNotFound):  # no such block
            return False
        return True


def token_store(setting: str, data_dir: Path, name: str) -> TokenStore:
    """The store a ``POSTFLOWS_COMMERCE_TOKEN_STORE`` value names: ``file`` or ``block:<name>``."""
    kind, _, block = setting.partition(":")
    if kind == "file":
        return FileTokenStore(data_dir / "tokens", name)
    if kind == "block":
        return BlockTokenStore(block or name)
    raise ValueError(f"POSTFLOWS_COMMERCE_TOKEN_STORE={setting!r}: use 'file' or 'block:<name>'")
