"""The OAuth side of ``postflows doctor --live``: a client-credentials token for each scope the newspaper
API's clients ask for, and for each configured non-personal scope of the commerce API, followed there by the
one API request that bills nothing (``GET <address path>/zips?zipCity=8001``).

Tokens are asked through the connectors' :class:`~connectors.oauth.ClientCredentials` (its token request,
its reading of the answer, its registration of every token issued with the secret scrubber): the same
request a run sends before its first API call, and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import httpx

from connectors.bodies import read_body
from connectors.commerce import CommerceClient
from connectors.errors import ApiError, AuthFailed, TransportFailure
from connectors.guesses import guess
from connectors.http import ClientOptions
from connectors.newspaper.models import Scope
from connectors.oauth import ClientCredentials
from connectors.paths import CommerceScopes
from postflows.doctor import ApiReport, Check, Observed
from postflows.doctor_answers import Answers, describe, oauth_error, status_line
from runtime.privacy import masked_url
from runtime.settings import Settings
from runtime.settings.variables import variable_named
from runtime.wiring import Service, response_limits, retry_policy

ZIP_PROBE = "8001"
"""A postcode every edition of the directory knows (Zürich): the zips probe asks for it."""
OPENID_SCOPES = frozenset({"openid", "profile", "email", "address", "phone", "offline_access"})
"""Scopes of a user's sign-in, never asked with client credentials."""
CLIENT_REFUSED = frozenset({"invalid_client", "unauthorized_client"})


@dataclass(frozen=True)
class TokenAnswer:
    """What the token endpoint answered for one scope: ``issued``, else ``error`` on one line; ``answer``
    is None when no answer came at all."""

    scope: str
    issued: bool
    answer: httpx.Response | None
    error: str = ""


@dataclass(frozen=True)
class OAuthSettings:
    """The settings named when a token is refused: the token address's and the client's variables."""

    token_url: str
    client: str


async def ask_token(
    http: httpx.AsyncClient, credentials: ClientCredentials, scope: str, settings: Settings
) -> TokenAnswer:
    """One client-credentials token request for ``scope``; the token, when issued, is kept by
    ``credentials`` for the clients that share them."""
    scopes = frozenset({scope})
    try:
        streamed = await http.send(credentials.token_request(scopes), stream=True)
        try:
            response = await read_body(
                streamed, response_limits(settings).body, api=credentials.api, cut=True, sent=False
            )
        finally:
            await streamed.aclose()
    except httpx.TransportError as error:
        return TokenAnswer(scope, False, None, " ".join(f"{type(error).__name__}: {error}".split()))
    try:
        credentials.accept_token_response(scopes, response)
    except AuthFailed as error:
        return TokenAnswer(scope, False, response, " ".join(str(error).split()))
    return TokenAnswer(scope, True, response)


def token_check(answer: TokenAnswer, named: OAuthSettings, *, scope_fix: str) -> Check:
    """The check of one token request: what was answered and, when refused, the setting to change."""
    name = f"token {answer.scope}"
    if answer.issued:
        return Check(name, True, f"issued ({status_line(answer.answer)})")
    if answer.answer is None:
        return Check(
            name, False, f"token endpoint not reachable ({answer.error})", f"check {named.token_url}"
        )
    code = oauth_error(answer.answer)
    if code == "invalid_scope":
        return Check(name, False, f"scope {answer.scope} refused ({describe(answer.answer)})", scope_fix)
    if code in CLIENT_REFUSED or answer.answer.status_code == 401:
        return Check(name, False, f"client refused ({describe(answer.answer)})", f"check {named.client}")
    return Check(
        name, False, f"the token endpoint answered {describe(answer.answer)}", f"check {named.token_url}"
    )


def _final(check: Check) -> bool:
    """Whether a refused token ends the API's checks: every other scope would be refused the same way."""
    return not check.ok and not check.answered.startswith("scope ")


async def _tokens(
    http: httpx.AsyncClient,
    credentials: ClientCredentials,
    scopes: dict[str, str],
    named: OAuthSettings,
    settings: Settings,
    report: ApiReport,
) -> list[TokenAnswer]:
    """A token for each of ``scopes`` (scope → the fix when it is refused), until one is refused for a
    reason every other would share; each answer is a check of ``report``."""
    answers: list[TokenAnswer] = []
    for scope, scope_fix in scopes.items():
        answer = await ask_token(http, credentials, scope, settings)
        answers.append(answer)
        check = token_check(answer, named, scope_fix=scope_fix)
        report.checks.append(check)
        if _final(check):
            break
    report.reachable = any(answer.answer is not None for answer in answers)
    return answers


def _named(settings: Settings, api: str, token_url: str) -> OAuthSettings:
    model = type(settings)
    client = f"{variable_named(model, api, 'client_id')} / {variable_named(model, api, 'client_secret')}"
    return OAuthSettings(variable_named(model, api, token_url), client)


async def check_newspaper(
    settings: Settings, service: Service, http: httpx.AsyncClient, answers: Answers, report: ApiReport
) -> None:
    """A token for each of the newspaper API's scopes (§4: one per endpoint group); no API request."""
    credentials = ClientCredentials(str(service.token_url), service.user, service.secret, api="newspaper")
    fix = "the newspaper API's scopes are those of §4: ask the operator to register it for this client"
    asked = await _tokens(
        http,
        credentials,
        {scope.value: fix for scope in Scope},
        _named(settings, "newspaper", "token_url"),
        settings,
        report,
    )
    report.observed.append(_token_endpoint(asked, masked_url(str(service.token_url))))


def _token_endpoint(asked: list[TokenAnswer], where: str) -> Observed:
    """Whether the configured token URL answers as an OAuth 2.0 token endpoint: a token, or an RFC 6749
    error."""
    known = guess("newspaper.token-endpoint")
    answered = [answer for answer in asked if answer.answer is not None]
    if not answered:
        return Observed(known, None, f"no answer from {where}")
    issued = sum(answer.issued for answer in answered)
    seen = f"POST {where}: tokens issued for {issued} of {len(answered)} scopes asked"
    if issued < len(answered):
        seen += f"; a refusal answered {describe(next(a.answer for a in answered if not a.issued))}"
    holds = all(
        answer.issued or (answer.answer is not None and oauth_error(answer.answer) is not None)
        for answer in answered
    )
    return Observed(known, holds, seen)


def commerce_scopes(settings: Settings) -> dict[str, list[str]]:
    """Each configured non-personal scope of the commerce API (sign-in scopes left out) and the variables
    that name it."""
    configured = settings.commerce.scopes
    by_scope: dict[str, list[str]] = {}
    for item in fields(CommerceScopes):
        scope = getattr(configured, item.name)
        if item.name == "personal" or scope in OPENID_SCOPES:
            continue
        by_scope.setdefault(scope, []).append(variable_named(type(settings), "commerce", "scopes", item.name))
    return by_scope


async def check_commerce(
    settings: Settings, service: Service, http: httpx.AsyncClient, answers: Answers, report: ApiReport
) -> None:
    """A token for each configured non-personal scope, then the zips of a known postcode with the token of
    the look-ups' scope."""
    credentials = ClientCredentials(str(service.token_url), service.user, service.secret, api="commerce")
    scopes = commerce_scopes(settings)
    fixes = {
        scope: f"check {' / '.join(variables)}, or have the scope registered for the client"
        for scope, variables in scopes.items()
    }
    asked = await _tokens(
        http, credentials, fixes, _named(settings, "commerce", "auth_url"), settings, report
    )
    lookups = settings.commerce.scopes.autocomplete
    if not any(answer.issued and answer.scope == lookups for answer in asked):
        report.observed.append(_scopes_guess(asked, len(scopes)))
        report.observed.append(Observed(guess("commerce.zips-probe"), None, f"no token for scope {lookups}"))
        return
    client = CommerceClient(
        service.base_url,
        credentials=credentials,
        scopes=settings.commerce.scopes,
        paths=settings.commerce.paths,
        options=ClientOptions(
            http_client=http, retry=retry_policy(settings), limits=response_limits(settings)
        ),
    )
    check, towns = await _zips_probe(settings, client)
    zips = answers.last("GET", "/zips")
    report.checks.append(check)
    # A token of the look-ups' scope refused by the look-up: the scope-to-endpoint assignment differs.
    refused = zips is not None and zips.status_code in (401, 403)
    scopes_seen = _scopes_guess(asked, len(scopes), refused_at_zips=lookups if refused else None)
    report.observed.append(_set_otherwise(settings, scopes_seen))
    report.observed.append(_zips_guess(zips, towns))


async def _zips_probe(settings: Settings, client: CommerceClient) -> tuple[Check, int]:
    """``GET <address path>/zips?zipCity=8001``: the check, and how many entries name 8001."""
    path = f"{settings.commerce.paths.address}/zips?zipCity={ZIP_PROBE}"
    base = variable_named(type(settings), "commerce", "url")
    try:
        towns = await client.zips(ZIP_PROBE)
    except ApiError as error:
        text = " ".join(str(error).split())
        if isinstance(error, AuthFailed):
            scope = variable_named(type(settings), "commerce", "scopes", "autocomplete")
            lookups = settings.commerce.scopes.autocomplete
            return Check(
                "zips", False, f"GET {path} refused the token of scope {lookups}: {text}", f"check {scope}"
            ), 0
        if isinstance(error, TransportFailure) and not error.sent:
            return Check("zips", False, f"GET {path}: not reachable ({text})", f"check {base}"), 0
        return Check("zips", False, f"GET {path}: {text}", f"check {base}"), 0
    found = sum(town.zip == ZIP_PROBE for town in towns)
    if found:
        return Check("zips", True, f"GET {path}: {_entries(len(towns))}"), found
    address_path = variable_named(type(settings), "commerce", "paths", "address")
    return Check(
        "zips", False, f"GET {path}: no entry for a known postcode", f"check {base} and {address_path}"
    ), 0


def _scopes_guess(asked: list[TokenAnswer], wanted: int, *, refused_at_zips: str | None = None) -> Observed:
    """Whether the configured scopes are those the service gives and asks for: each one's token issued,
    and the look-ups' token taken by the look-up."""
    known = guess("commerce.scopes")
    refused = [
        answer.scope
        for answer in asked
        if answer.answer is not None and oauth_error(answer.answer) == "invalid_scope"
    ]
    issued = [answer.scope for answer in asked if answer.issued]
    if refused:
        return Observed(
            known, False, f"scopes refused: {', '.join(refused)}; issued: {', '.join(issued) or 'none'}"
        )
    if len(issued) < wanted:
        return Observed(known, None, "the client was refused before every scope was asked")
    if refused_at_zips is not None:
        return Observed(known, False, f"the zips probe refused the token of scope {refused_at_zips}")
    return Observed(known, True, f"a token issued for each of {', '.join(issued)}")


def _set_otherwise(settings: Settings, seen: Observed) -> Observed:
    """What was seen of the scopes when they are set otherwise than our guess: the guess itself was not
    asked (only the settings that replace it), so it is not observed."""
    configured, ours = settings.commerce.scopes, CommerceScopes()
    changed = [
        f"{variable_named(type(settings), 'commerce', 'scopes', item.name)}={getattr(configured, item.name)}"
        for item in fields(CommerceScopes)
        if getattr(configured, item.name) != getattr(ours, item.name)
    ]
    if not changed or seen.holds is None:
        return seen
    return Observed(seen.guess, None, f"the scopes are set otherwise ({', '.join(changed)}): {seen.seen}")


def _zips_guess(answer: httpx.Response | None, towns: int) -> Observed:
    known = guess("commerce.zips-probe")
    if answer is None:
        return Observed(known, None, "no answer to the zips probe")
    seen = f"GET zips?zipCity={ZIP_PROBE}: {describe(answer)}, {_entries(towns)} for {ZIP_PROBE}"
    if answer.status_code not in (200, 404):
        return Observed(known, None, seen)
    return Observed(known, answer.status_code == 200 and towns > 0, seen)


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"
