"""The typed error tree shared by every connector, and the one place that maps HTTP failures onto it.

    PostflowsError                    (core.errors: the root of every error of ours)
    └── ApiError                      (api, retryable)
        ├── TransportFailure          connect/read/protocol errors, in the answer's body too; retryable
        │   └── DeadlineExceeded      an attempt took longer than its total deadline
        ├── HttpStatusError           an HTTP status the API did not explain (status_code)
        │   ├── ServerError           5xx; retryable
        │   ├── RateLimited           429 or a service-level "too many requests"; retryable
        │   ├── AuthFailed            401/403 or a service-level authentication failure
        │   └── NotFound              404
        ├── MalformedResponse         an answer that cannot be read; retryable, outcome unknown
        │   ├── ResponseTooLarge      an answer larger than the most that is read of one
        │   └── JsonTooDeep           JSON nested deeper than is read (also a ValueError: "not JSON")
        └── RemoteRejected            the service answered and refused (code, message, meaning)
    └── LoginFailed                   a user's sign-in (authorization code flow) or saved tokens unusable
        ├── AuthorizationDenied       the authorization server redirected with an error
        ├── StateMismatch             the redirect's state is not the one the sign-in sent
        ├── IdTokenInvalid            the ID token fails an OpenID Connect Core check
        └── LoginRequired             personal data asked for without a signed-in user

Connector packages subclass these (for example ``AddressServiceStatusError``) and keep their own code
tables. Two flags drive every decision above the connectors: ``retryable`` (the retry layer may try again)
and ``not_processed`` (the failure certainly means that the service did not act on the request: it was never
sent, or its answer is on the API's list of answers that mean "not processed"). Every other failure leaves
the outcome unknown (``outcome_unknown``): a request that changes something is then never sent again on its
own. Each API keeps its list as data beside its code tables (:class:`SubmissionAnswers`). ``window_s`` marks
a per-window limit (for example "per minute"): callers wait for the next window instead of backing off in
seconds.

Every error's text is scrubbed of the registered secrets when it is built, and every error survives
pickling with its attributes, as every ``PostflowsError`` does (:mod:`core.errors`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import PostflowsError
from core.redaction import scrub_secrets

if TYPE_CHECKING:  # httpx is loaded by the clients that hand its responses here
    import httpx


class ApiError(PostflowsError):
    """A remote API call failed.

    Args:
        message: what failed, naming the API and the request.
        api: the API's name.
        retryable: whether the retry layer may try again (default: the class's).
        sent: False when the request certainly never reached the service (another request it needed, such
            as a token request, failed first).
        not_processed: the answer is on the API's list of answers that certainly mean "not processed".
    """

    retryable: bool = False
    window_s: float | None = None

    def __init__(
        self,
        message: str,
        *,
        api: str,
        retryable: bool | None = None,
        sent: bool = True,
        not_processed: bool = False,
    ) -> None:
        super().__init__(message)
        self.api = api
        if retryable is not None:
            self.retryable = retryable
        self.sent = sent
        self._not_processed = not_processed

    @property
    def not_processed(self) -> bool:
        """True only when the service certainly did not act on the request: it was never sent, or the
        answer is one that the API's list says means "not processed"."""
        return not self.sent or self._not_processed

    @property
    def outcome_unknown(self) -> bool:
        """True when the service may have processed the request although the call failed."""
        return not self.not_processed

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class TransportFailure(ApiError):
    """The request never got a whole HTTP answer (connect, read, write or protocol failure, before the status
    line or while the body streams).

    ``sent`` is False only when the request certainly never reached the service: the connection was never
    made, no connection was free, or another request of the auth flow failed before it.
    """

    retryable = True

    def __init__(self, message: str, *, api: str, sent: bool = True) -> None:
        super().__init__(message, api=api, sent=sent)


class HttpStatusError(ApiError):
    """An HTTP status that the API's own error payload does not explain."""

    def __init__(
        self,
        message: str,
        *,
        api: str,
        status_code: int,
        retry_after: float | None = None,
        retryable: bool | None = None,
        sent: bool = True,
        not_processed: bool = False,
    ) -> None:
        super().__init__(message, api=api, retryable=retryable, sent=sent, not_processed=not_processed)
        self.status_code = status_code
        self.retry_after = retry_after


class ServerError(HttpStatusError):
    retryable = True


class RateLimited(HttpStatusError):
    """HTTP 429: refused before processing (RFC 6585), so even a submission may be sent again.

    ``before_work``: whether a 429 comes from a rate limiter in front of the service, before any work (the
    registered guess ``http.429-not-processed``); a client told otherwise clears it, and a 429 to a
    submission then leaves its outcome unknown.
    """

    retryable = True
    before_work = True

    @property
    def not_processed(self) -> bool:
        return not self.sent or self.before_work


class AuthFailed(HttpStatusError):
    pass


class NotFound(HttpStatusError):
    pass


class MalformedResponse(ApiError):
    """The service answered, but not in a shape that can be read (no JSON where JSON was due, fields missing).

    A read may be asked again; whether a submission took effect is unknown.
    """

    retryable = True


class ResponseTooLarge(MalformedResponse):
    """An answer larger than the limit of what is read of one: refused while it streams, before more of it is
    held. ``max_bytes``: the limit."""

    def __init__(self, message: str, *, api: str, max_bytes: int, sent: bool = True) -> None:
        super().__init__(message, api=api, sent=sent)
        self.max_bytes = max_bytes


class JsonTooDeep(MalformedResponse, ValueError):
    """JSON nested deeper than the limit, found before it is parsed (the parser would recurse that deep).

    It is a ``ValueError`` too, so code that reads "not JSON" from a ``ValueError`` treats it as such.
    """


class DeadlineExceeded(TransportFailure):
    """An attempt took longer than its total deadline, from sending the request to the last byte of its
    answer: the answer may have started, so a submission's outcome is unknown; a read may be asked again."""


class RemoteRejected(ApiError):
    """The service processed the request and refused it with its own code."""

    def __init__(
        self,
        message: str,
        *,
        api: str,
        code: str,
        meaning: str = "",
        retryable: bool | None = None,
        not_processed: bool = False,
    ) -> None:
        super().__init__(message, api=api, retryable=retryable, not_processed=not_processed)
        self.code = code
        self.meaning = meaning


@dataclass(frozen=True)
class SubmissionAnswers:
    """Which answers of one API to a submitting request (a POST that bills, orders or registers) certainly
    mean "not processed" (final: the next run may submit again), which leave the outcome unknown
    (the next run stops until the user confirms with ``--resubmit``), and which took the submission although
    they carry errors (``taken``: recorded with the service's id and followed, never sent again). Each entry
    is a line for the docs; the decision itself is made by the API's error mapping from the same data.
    """

    api: str
    not_processed: tuple[str, ...]
    uncertain: tuple[str, ...]
    taken: tuple[str, ...] = ()


RATE_LIMITED_ANSWER = "HTTP 429 (refused before processing, RFC 6585)"
NEVER_SENT = "a failure before the request left (connection refused, token request refused)"


class LoginFailed(PostflowsError):
    """Signing in with the authorization code flow failed, or the user's tokens cannot be used."""


class AuthorizationDenied(LoginFailed):
    def __init__(self, error: str, description: str = "") -> None:
        text = f"the authorization server refused the sign-in: {error}"
        super().__init__(text + (f" ({description})" if description else ""))
        self.error = error


class StateMismatch(LoginFailed):
    """The redirect does not carry the ``state`` this sign-in sent: it belongs to another one or is forged."""


class IdTokenInvalid(LoginFailed):
    def __init__(self, reason: str) -> None:
        super().__init__(f"the ID token is not valid: {reason}")
        self.reason = reason


class LoginRequired(LoginFailed):
    """Personal data needs the user's consent, and no signed-in user's tokens are available."""


def parse_retry_after(response: httpx.Response) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds; HTTP dates are ignored."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def error_for_http_status(
    response: httpx.Response, *, api: str, not_processed: frozenset[int] = frozenset()
) -> HttpStatusError:
    """Map a non-success HTTP response to a typed error; the body is quoted briefly, never headers.
    ``not_processed``: the statuses that the API's list says certainly mean "not processed"."""
    status = response.status_code
    reason = response.reason_phrase or "HTTP error"
    detail = _short_body(response)
    message = f"{api}: HTTP {status} {reason} for {response.request.method} {response.request.url.path}"
    if detail:
        message += f": {detail}"
    retry_after = parse_retry_after(response)
    cls: type[HttpStatusError]
    if status == 429:
        cls = RateLimited
    elif status in (401, 403):
        cls = AuthFailed
    elif status == 404:
        cls = NotFound
    elif status >= 500:
        cls = ServerError
    else:
        cls = HttpStatusError
    return cls(
        message, api=api, status_code=status, retry_after=retry_after, not_processed=status in not_processed
    )


def _short_body(response: httpx.Response, limit: int = 200) -> str:
    import httpx  # loaded already: the response is one of its objects

    try:
        text = response.text
    except (httpx.ResponseNotRead, UnicodeDecodeError):
        return ""
    return quote_body(text, limit)


def quote_body(text: str, limit: int = 200) -> str:
    """A response body fit to quote in an error: on one line, scrubbed of secrets, cut at ``limit``."""
    # Scrubbed before and after the whitespace is folded: a secret holding a line break or two spaces.
    text = scrub_secrets(" ".join(scrub_secrets(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
