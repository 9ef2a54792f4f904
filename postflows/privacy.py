"""What the composition root does so that nothing private leaves the process or the data dir: it registers
every configured secret with the process's secret scrubber (:mod:`connectors.redaction`), masks the
passwords a URL carries wherever they stand, and makes the data dir its owner's alone (:mod:`fileio.files`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit

if TYPE_CHECKING:
    from postflows.settings import Settings

URL_MASK = "***"
# Query parameters that carry a credential (libpq's password and sslpassword, ODBC's pwd, tokens, API keys).
SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|api_?key|access_?key|auth|credential", re.IGNORECASE)


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries: the password of its user part and the values of its secret-named
    query parameters (``password=``, ``pwd=``, ``sslpassword=``, ``token=``), as written and decoded."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    found = [] if password is None else [password, unquote(password)]
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if SECRET_PARAMETER.search(name):
            found.append(value)
    raw_query = parts.query.split("&") if parts.query else []
    for pair in raw_query:
        name, _, value = pair.partition("=")
        if value and SECRET_PARAMETER.search(unquote(name)):
            found.append(value)
    return [secret for secret in dict.fromkeys(found) if secret]


def masked_url(url: str) -> str:
    """``url`` with the password of its user part and every secret-named query parameter's value shown as
    ``***``; anything else as written."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    masked = url
    if password is not None:
        userinfo, _, host = parts.netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        masked = masked.replace(f"//{parts.netloc}", f"//{user}:{URL_MASK}@{host}", 1)
    if parts.query:
        query = "&".join(_masked_pair(pair) for pair in parts.query.split("&"))
        masked = masked.replace(f"?{parts.query}", f"?{query}", 1)
    return masked


def _masked_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    if equals and value and SECRET_PARAMETER.search(unquote(name)):
        return f"{name}={URL_MASK}"
    return pair


def register_settings(settings: Settings) -> None:
    """Register what ``settings`` name with the process: every ``SecretStr`` and every password in a URL
    setting with the secret scrubber (the address service's also as HTTP Basic credentials), and the data
    dir as a private root of the file writer."""
    from pydantic import SecretStr

    from connectors.redaction import SCRUBBER
    from fileio.files import keep_private

    for variable in settings.variables():
        value = variable.of(settings)
        if isinstance(value, SecretStr):
            SCRUBBER.register(value.get_secret_value())
        elif isinstance(value, str) and "://" in value:
            _register_all(url_secrets(value))
    address_service = settings.address_service
    if address_service.user and address_service.password is not None:
        SCRUBBER.register_basic(address_service.user, address_service.password.get_secret_value())
    keep_private(settings.data_dir)


def _register_all(secrets: Iterable[str]) -> None:
    from connectors.redaction import SCRUBBER

    for secret in secrets:
        SCRUBBER.register(secret)
