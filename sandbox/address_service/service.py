"""State and gatekeeping shared by every address-service endpoint: Basic authentication, injected
service statuses, per-minute limits, billing references and the JSON envelopes with their Status.

Authentication failures follow the spec's rule that every response carries a Status: a wrong password
answers HTTP 200 with the endpoint's result wrapper and Status 101, an unknown user Status 102. Only a
request without (readable) Basic credentials gets HTTP 401 with a ``WWW-Authenticate`` challenge.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
import secrets
from typing import TYPE_CHECKING, Any, Literal

from fastapi import Request
from fastapi.responses import JSONResponse

from sandbox.address_service.aligned_input import has_agreed_header
from sandbox.address_service.alignments import SandboxAlignment, validates
from sandbox.address_service.jobs import JobStore
from sandbox.address_service.matching import Matcher
from sandbox.address_service.postcodes import load_postcode_directory
from sandbox.address_service.reference_seed import load_reference
from sandbox.answer_faults import Answer
from sandbox.faults import active_fault
from sandbox.state import SandboxState

if TYPE_CHECKING:  # the config holds this package's alignments: a runtime import would be circular
    from sandbox.config import SandboxConfig


class Status:
    """§7 status integers used by the sandbox."""

    OK = 0
    AUTHENTICATION_FAILED = 101
    USER_UNKNOWN = 102
    KEY_UNKNOWN = 103
    NO_RRN_PERMISSION = 105
    MAX_REQUESTS = 106
    INTERNAL_ERROR = 201
    ITEM_NOT_FOUND = 302
    RRN_INVALID_FORMAT = 402
    RRN_NOT_ACTIVE = 403
    RRN_UNKNOWN = 404
    UPLOAD_LIMIT = 501
    INVALID_PARAMETER = 801


# The fields each result wrapper carries besides Status, as answered when the call is refused.
EMPTY_RESULTS: dict[str, dict[str, Any]] = {
    "UploadFileResult": {"FileToken": None},
    "CreateFileResult": {"FileToken": None},
    "RunBatchResult": {"BatchToken": None, "SettlementId": 0},
    "CheckBatchStatusResult": {"BatchStatus": None},
    "RunQuery2Result": {"Result": None, "SettlementId": 0},
    "RunQuery2WithClientResult": {"Result": None, "SettlementId": 0},
    "QueryAutoComplete4Result": {"AutoCompleteResult": []},
    "QueryAutoComplete3Result": {"AutoCompleteResult": []},
    "QueryAutoCompleteResult": {"AutoCompleteResult": []},
    "QueryBuildingVerification2Result": {"BuildingVerificationData": None},
    "QueryBuildingVerificationResult": {"BuildingVerificationData": None},
}
_RRN_FORMAT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,34}$")
Limit = Literal["query", "upload"]


def answer(
    wrapper: str | None, status: int = Status.OK, *, http_status: int = 200, **fields: Any
) -> JSONResponse:
    """``{wrapper: {...fields, Status}}`` (or the bare ``{Status}`` body when ``wrapper`` is None), with
    HTTP ``http_status`` (200: every answer carries its Status, §7)."""
    body: dict[str, Any] = {**EMPTY_RESULTS.get(wrapper or "", {}), **fields, "Status": status}
    return JSONResponse({wrapper: body} if wrapper else body, status_code=http_status)


def processed_failure(value: Any, answered: bytes) -> tuple[int, bytes]:
    """What replaces a processed request's answer under a ``processed_status`` fault: its result wrapper
    (the bare ``{Status}`` body for ping, download and delete) with ``Status`` ``value``, 201 by default."""
    try:
        body = json.loads(answered)
    except ValueError:
        body = None
    wrapper = next(iter(body)) if isinstance(body, dict) and len(body) == 1 else None
    status = int(value) if value is not None else Status.INTERNAL_ERROR
    response = answer(wrapper if wrapper in EMPTY_RESULTS else None, status)
    return response.status_code, bytes(response.body)


def accepted(answer: Answer) -> bool:
    """Whether the service accepted a request: HTTP 200 with ``Status`` 0 (in its result wrapper or bare),
    or a download's bytes."""
    if answer.status != 200:
        return False
    body = answer.json()
    if body is None:
        return "json" not in answer.content_type
    if isinstance(body, dict) and len(body) == 1 and isinstance(next(iter(body.values())), dict):
        body = next(iter(body.values()))
    return isinstance(body, dict) and body.get("Status") == Status.OK


class AddressService:
    """Everything one app instance knows: configuration, files and jobs, matchers, rate windows."""

    def __init__(self, config: SandboxConfig, state: SandboxState) -> None:
        self.config = config
        self.state = state
        self.store = JobStore(state)
        reference, directory = load_reference(), load_postcode_directory()
        self.maintenance = Matcher(reference, directory=directory)
        self.validation = Matcher(reference, validation_only=True, directory=directory)
        # The epoch seconds of the calls counted in the last minute, per limit.
        self._windows = state.table("address.rate_windows")
        self._deletions_asked = state.table("address.deletions_asked")

    def now(self) -> float:
        return float(self.config.clock())

    def matcher_for(self, key: str) -> Matcher | None:
        """The alignment a key selects: the first configured key maintains, the others validate; a key with
        an agreed alignment of its own validates when its name says so (see :func:`validates`), else
        maintains. None for an unknown key."""
        keys = self.config.address_batch_keys
        if key in keys:
            return self.maintenance if key == keys[0] else self.validation
        if key in self.config.alignments:
            return self.validation if validates(key) else self.maintenance
        return None

    def alignment_for(self, key: str, content: bytes) -> SandboxAlignment | None:
        """The alignment an upload for ``key`` is read by (see :func:`alignment_for`)."""
        return alignment_for(self.config, key, content)

    def is_maintenance(self, key: str) -> bool:
        return self.matcher_for(key) is self.maintenance

    def refuse(
        self, request: Request, wrapper: str | None, limit: Limit | None = None
    ) -> JSONResponse | None:
        """The answer that stops this call (auth, injected status, per-minute limit), or None to proceed."""
        credentials = _basic_credentials(request)
        if credentials is None:
            return JSONResponse(
                {"Status": Status.AUTHENTICATION_FAILED},
                status_code=401,
                headers={"WWW-Authenticate": 'Basic realm="address web service"'},
            )
        user, password = credentials
        # The other answer of address-service.failure-http-status: a refused sign-in as HTTP 401.
        refused = 401 if self.config.guesses == "other" else 200
        if not secrets.compare_digest(user.encode(), self.config.address_user.encode()):
            return answer(wrapper, Status.USER_UNKNOWN, http_status=refused)
        if not secrets.compare_digest(password.encode(), self.config.address_password.encode()):
            return answer(wrapper, Status.AUTHENTICATION_FAILED, http_status=refused)
        fault = active_fault(request)
        if fault is not None and fault.kind == "service_status":
            return answer(wrapper, int(fault.value if fault.value is not None else Status.INTERNAL_ERROR))
        if limit is not None and not self._within_limit(limit):
            return answer(wrapper, Status.MAX_REQUESTS if limit == "query" else Status.UPLOAD_LIMIT)
        return None

    def first_deletion_asked(self, token: str) -> bool:
        """Whether this is the first time the deletion of ``token`` is asked (remembered in the state)."""
        with self.state.atomic():
            if self._deletions_asked.get(token):
                return False
            self._deletions_asked.put(token, True)
            return True

    def billing_status(self, reference: Any) -> int:
        """Status of a billing reference number for the *withclient methods (0 when usable)."""
        if not self.config.address_client_methods_allowed:
            return Status.NO_RRN_PERMISSION
        if not isinstance(reference, str) or not _RRN_FORMAT.match(reference):
            return Status.RRN_INVALID_FORMAT
        if reference in self.config.address_inactive_billing_references:
            return Status.RRN_NOT_ACTIVE
        if reference not in self.config.address_billing_references:
            return Status.RRN_UNKNOWN
        return Status.OK

    def _within_limit(self, limit: Limit) -> bool:
        maximum = (
            self.config.max_queries_per_minute if limit == "query" else self.config.max_uploads_per_minute
        )
        if maximum is None:
            return True
        now = self.now()
        with self.state.atomic():
            window: list[float] = self._windows.get(limit) or []
            del window[: bisect.bisect_right(window, now - 60.0)]  # oldest first: drop those a minute old
            within = len(window) < maximum
            if within:
                window.append(now)
            self._windows.put(limit, window)
            return within


def _basic_credentials(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, separator, password = decoded.partition(":")
    return (user, password) if separator else None


def alignment_for(config: SandboxConfig, key: str, content: bytes) -> SandboxAlignment | None:
    """The alignment an upload for ``key`` is read by: the one agreed for the key; for a configured key
    without one, the held alignment whose header the upload has; else None (any layout, the columns come
    back under the names they were uploaded with)."""
    agreed = config.alignments.get(key)
    if agreed is not None or key not in config.address_batch_keys:
        return agreed
    held = config.held_alignments.values()
    return next((alignment for alignment in held if has_agreed_header(content, alignment)), None)
