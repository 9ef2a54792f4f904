"""Authentication shared by the connectors: HTTP Basic here (httpx sends it with every request, without
waiting for a 401 challenge); OAuth 2.0 client credentials in :mod:`connectors.oauth`.
"""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from core.redaction import SCRUBBER


def basic_auth(username: str, password: SecretStr) -> httpx.BasicAuth:
    """HTTP Basic credentials for every request; the password leaves its ``SecretStr`` only here, and from
    now on is scrubbed (with the encoded credentials) from every error, log and output of the process."""
    secret = password.get_secret_value()
    SCRUBBER.register_basic(username, secret)
    return httpx.BasicAuth(username, secret)
