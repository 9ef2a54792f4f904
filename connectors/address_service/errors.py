"""The address web service's ``Status`` table (spec §7) mapped onto the shared error tree.

RemoteRejected
└── AddressServiceStatusError        (status, name, meaning)
    ├── AuthenticationStatusError    101-105
    ├── ThrottledStatusError         106, 501      retryable in the next minute
    ├── InternalStatusError          201-203       retryable when nothing changes
    ├── DatabaseStatusError          301, 302
    ├── SettlementStatusError        401-404
    ├── ParameterStatusError         801, 802
    └── UnknownStatusError           999 and any status the table does not name

Only the statuses of :data:`NOT_PROCESSED_STATUSES` certainly mean that the service did not act on a
request; after any other failure a submission's outcome is unknown.
"""

from __future__ import annotations

from typing import NamedTuple

from connectors.errors import NEVER_SENT, RATE_LIMITED_ANSWER, RemoteRejected, SubmissionAnswers

API = "address-service"


class StatusInfo(NamedTuple):
    name: str
    meaning: str


STATUS_TABLE: dict[int, StatusInfo] = {
    0: StatusInfo("NoError", "query successful"),
    101: StatusInfo("AuthenticationFailed", "authentication failed"),
    102: StatusInfo("AuthenticationUserUnknown", "unknown user"),
    103: StatusInfo("AuthenticationUserMissingRole", "the key entered is unknown"),
    104: StatusInfo(
        "AuthenticationUserNotOwner", "the request does not belong to the user named in the query"
    ),
    105: StatusInfo(
        "AuthenticationUserNoRrnPermissions", "the user may not call methods with automatic settlement"
    ),
    106: StatusInfo("AuthenticationUserMaxRequestsReached", "maximum queries per minute reached"),
    201: StatusInfo("InternalServerCallFailed", "internal error in the service"),
    202: StatusInfo("InternalServerCall", "internal error in the service"),
    203: StatusInfo("InternalServerCall", "query lasted longer than the defined timeout"),
    301: StatusInfo("DatabaseOperationFailed", "error accessing the database"),
    302: StatusInfo("DatabaseItemNotFound", "error accessing the database"),
    401: StatusInfo("SettlementCreateFailed", "error recording the number for billing"),
    402: StatusInfo("RrnInvalidFormat", "invoice reference number has an invalid format"),
    403: StatusInfo("RrnNotActiv", "invoice reference number not active"),
    404: StatusInfo("RrnUnknown", "invoice reference number invalid"),
    501: StatusInfo("UploadFileLimitReached", "maximum uploaded files per minute reached"),
    801: StatusInfo("TokenParameterInvalidFormatException", "a parameter has an incorrect format"),
    802: StatusInfo("InvalidGeoCoordinateFormat", "a parameter has an incorrect format"),
    999: StatusInfo("UnknownError", "unknown error"),
}

RETRYABLE_STATUSES = frozenset({106, 201, 202, 203, 501})

NOT_PROCESSED_STATUSES = frozenset({101, 102, 103, 104, 105, 106, 402, 403, 404, 501, 801, 802})
"""The statuses that certainly mean "not processed": the request was refused before any work (sign-in,
key, per-minute limits, invoice reference, parameter format). 201-203 (internal error, timeout), 301/302
(database access), 401 (billing record failed), 999 and any status the table does not list may come after
the work was done."""


def _status_line(status: int) -> str:
    return f"Status {status} {STATUS_TABLE[status].name}"


SUBMISSION_ANSWERS = SubmissionAnswers(
    api=API,
    not_processed=(
        *(_status_line(status) for status in sorted(NOT_PROCESSED_STATUSES)),
        RATE_LIMITED_ANSWER,
        NEVER_SENT,
    ),
    uncertain=(
        *(
            _status_line(status)
            for status in sorted(STATUS_TABLE)
            if status and status not in NOT_PROCESSED_STATUSES
        ),
        "any Status the specification does not list",
        "any other HTTP error, an answer that is not JSON or lacks its Status, a dropped connection",
    ),
)


class AddressServiceStatusError(RemoteRejected):
    """The service answered with a non-zero ``Status``."""

    def __init__(self, status: int, *, operation: str) -> None:
        info = STATUS_TABLE.get(status, StatusInfo("Unlisted", "status not listed in the specification"))
        super().__init__(
            f"{API}: {operation} failed with Status {status} {info.name}: {info.meaning}",
            api=API,
            code=str(status),
            meaning=info.meaning,
            retryable=status in RETRYABLE_STATUSES,
            not_processed=status in NOT_PROCESSED_STATUSES,
        )
        self.status = status
        self.name = info.name
        self.operation = operation


class AuthenticationStatusError(AddressServiceStatusError):
    pass


class ThrottledStatusError(AddressServiceStatusError):
    """Status 106 or 501: a per-minute limit; the request was refused, so it may be sent again next minute."""

    window_s = 60.0


class InternalStatusError(AddressServiceStatusError):
    """Status 201-203: the service failed or timed out internally, possibly after it acted on the request."""


class DatabaseStatusError(AddressServiceStatusError):
    pass


class SettlementStatusError(AddressServiceStatusError):
    pass


class ParameterStatusError(AddressServiceStatusError):
    pass


class UnknownStatusError(AddressServiceStatusError):
    pass


def _class_for(status: int) -> type[AddressServiceStatusError]:
    if status in (106, 501):
        return ThrottledStatusError
    if 101 <= status <= 105:
        return AuthenticationStatusError
    if 201 <= status <= 203:
        return InternalStatusError
    if status in (301, 302):
        return DatabaseStatusError
    if 401 <= status <= 404:
        return SettlementStatusError
    if status in (801, 802):
        return ParameterStatusError
    return UnknownStatusError


def status_error(status: int, *, operation: str) -> AddressServiceStatusError:
    """The typed error for a non-zero ``Status`` returned by ``operation``."""
    return _class_for(status)(status, operation=operation)
