"""What the composition root does so that nothing private leaves the process or the data dir: it registers
every configured secret with the process's secret scrubber (:mod:`core.redaction`), masks the
passwords a URL carries wherever they stand, and makes the data dir its owner's alone (:mod:`fileio.files`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit

if TYPE_CHECKING:
    from runtime.settings import Settings

URL_MASK = "***"
# Query parameters that carry a credential (libpq's password and sslpassword, ODBC's pwd, tokens, API keys).
SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|api_?key|access_?key|auth|credential", re.IGNORECASE)


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries: the password of its user part and the values of its secret-named
    query parameters (``password=``, ``pwd=``, ``sslpassword=``, ``token=``), as written and decoded."""
    try:
        parts = urlsplit(url)
        password, query = parts.password, parts.query
    except ValueError:  # a URL urlsplit refuses still has its secrets found
        password, query = _malformed_password(url), url.partition("?")[2].partition("#")[0]
    found = [] if password is None else [password, unquote(password)]
    for name, value in parse_qsl(query, keep_blank_values=False):
        if SECRET_PARAMETER.search(name):
            found.append(value)
    raw_query = query.split("&") if query else []
    for pair in raw_query:
        name, _, value = pair.partition("=")
        if value and SECRET_PARAMETER.search(unquote(name)):
            found.append(value)
    return [secret for secret in dict.fromkeys(found) if secret]


def masked_url(url: str) -> str:
    """``url`` with the password of its user part and every secret-named query parameter's value shown as
    ``***``; anything else as written. A URL ``urlsplit`` refuses (``u:PASS@[::1/x``) has everything between
    its user's name and its last ``@`` masked, and its query's secret-named values."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return _masked_malformed(url)
    masked = url
    if password is not None:
        userinfo, _, host = parts.netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        masked = masked.replace(f"//{parts.netloc}", f"//{user}:{URL_MASK}@{host}", 1)
    if parts.query:
        query = "&".join(_masked_pair(pair) for pair in parts.query.split("&"))
        masked = masked.replace(f"?{parts.query}", f"?{query}", 1)
    return masked


def _malformed_password(url: str) -> str | None:
    """What stands between the user's name and the last ``@`` of a URL ``urlsplit`` refuses, or None."""
    _, scheme_end, rest = url.partition("://")
    if not scheme_end or "@" not in rest:
        return None
    userinfo = rest.rpartition("@")[0]
    _, colon, password = userinfo.partition(":")
    return password if colon else None


def _masked_malformed(url: str) -> str:
    """A URL ``urlsplit`` refuses, masked without parsing it: the user part's password (all that stands
    between the user's name and the last ``@``) and the query's secret-named values."""
    scheme, scheme_end, rest = url.partition("://")
    if not scheme_end:
        return URL_MASK  # not even a scheme: nothing of it is shown
    if "@" in rest:
        userinfo, _, rest = rest.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        rest = f"{user}:{URL_MASK}@{rest}" if colon else f"{userinfo}@{rest}"
    head, question, query = rest.partition("?")
    if question:
        rest = head + "?" + "&".join(_masked_pair(pair) for pair in query.split("&"))
    return f"{scheme}://{rest}"


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

    from core.redaction import SCRUBBER
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
    from core.redaction import SCRUBBER

    for secret in secrets:
        SCRUBBER.register(secret)
