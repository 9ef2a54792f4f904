"""What a sandbox instance is configured with: its test accounts, timings and the fault plan."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr

from sandbox.address_service.alignments import SandboxAlignment
from sandbox.address_service.builtin_alignments import builtin_alignments
from sandbox.auth import TokenRegistry
from sandbox.commerce.paths import CommercePaths
from sandbox.commerce.users import CommerceUser, default_users
from sandbox.faults import FaultPlan
from sandbox.guesses import GuessMode
from sandbox.oidc import IdTokenFault

NEWSPAPER_SCOPES = (
    "SENDINGS_NEWSPAPER_SUBMISSION_ORDERS",
    "SENDINGS_NEWSPAPER_SUBMISSION_NEWSPAPERS",
    "SENDINGS_NEWSPAPER_SUBMISSION_DISTRIBUTION",
    "SENDINGS_NEWSPAPER_STATISTIC",
    "SENDINGS_NEWSPAPER_ADDRESS",
)


COMMERCE_SCOPES = (
    "DCAPI_ADDRESS_READ",
    "DCAPI_ADDRESS_VALIDATE",
    "DCAPI_ADDRESS_AUTOCOMPLETE",
    "DCAPI_DELIVERY",
    "DCAPI_PICKUP",
    "DCAPI_BARCODE_READ",
    "DCAPI_RETURN_ORDER",
    "openid",
    "profile",
    "email",
    "address",
    "phone",
)


_STATUS_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
DEFAULT_ORDER_STATUSES: tuple[str, ...] = ("LOADED",)


def parse_order_statuses(value: object) -> tuple[str, ...]:
    """The statuses of an order's life from a setting: comma-separated text (``LOADED,CONTROL,DONE``) or a
    sequence of names, upper-cased.

    Raises:
        ValueError: no name, or a name that is not a status word (letters, digits, underscores).
    """
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise ValueError(f"{value!r}: expected status names separated by commas, e.g. LOADED,CONTROL,DONE")
    names = tuple(str(item).strip().upper() for item in items)
    if not names or not all(_STATUS_NAME.fullmatch(name) for name in names):
        raise ValueError(f"{value!r}: expected status names separated by commas, e.g. LOADED,CONTROL,DONE")
    return names


OrderStatuses = Annotated[tuple[str, ...], BeforeValidator(parse_order_statuses)]
PingAnswer = Literal["status", "empty-json", "empty-text"]
"""What the address service's /ping answers besides its HTTP 200 (``SandboxConfig.address_ping_answer``)."""


class OAuthClient(BaseModel):
    """A registered client: its secret, the scopes it may ask for and its registered redirect URIs (a
    loopback redirect URI matches on any port, as RFC 8252 §7.3 asks)."""

    secret: str
    scopes: tuple[str, ...] = NEWSPAPER_SCOPES
    redirect_uris: tuple[str, ...] = ()


class SandboxConfig(BaseModel):
    """Settings of one sandbox app. ``clock`` returns epoch seconds; tests may pass a controllable one.

    ``state_dir``: where the app keeps orders, purchases, files, jobs and counters (a SQLite file shared by
    every process naming the same directory); ``None`` keeps them in memory for the app's lifetime.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    address_user: str = "sandbox-user"
    address_password: str = "sandbox-password"
    address_batch_keys: tuple[str, ...] = ("postflows_maintenance_v1", "postflows_validation_v1")
    address_billing_references: tuple[str, ...] = ("RRN-0001", "RRN-0002")
    # Well-formed but deactivated references answer Status 403 instead of 404.
    address_inactive_billing_references: tuple[str, ...] = ("RRN-0009",)
    # False: the technical user may not call the *withclient methods (Status 105).
    address_client_methods_allowed: bool = True
    # What /ping answers with its HTTP 200 (§4.1 shows nothing more): "status" the JSON {"Status": 0};
    # "empty-json" and "empty-text" an empty body with a JSON or a text content type.
    address_ping_answer: PingAnswer = "status"
    # Per-minute limits of the address service (None = unlimited): individual queries -> 106, uploads -> 501.
    max_queries_per_minute: int | None = None
    max_uploads_per_minute: int | None = None
    # Agreed alignments by batch key (§1): each key here is known in addition to address_batch_keys; its
    # uploads must have the agreed layout, its results name the agreed id column, it writes extra outputs.
    alignments: dict[str, SandboxAlignment] = Field(default_factory=dict)
    # Alignments the configured batch keys hold besides reading any layout by its column names, by profile
    # name: an upload whose header is exactly one of these is read by it (the client's built-in profiles).
    held_alignments: dict[str, SandboxAlignment] = Field(default_factory=builtin_alignments)

    oauth_clients: dict[str, OAuthClient] = Field(
        default_factory=lambda: {
            "sandbox-client": OAuthClient(secret="sandbox-secret"),
            "sandbox-commerce-client": OAuthClient(
                secret="sandbox-commerce-secret",
                scopes=COMMERCE_SCOPES,
                redirect_uris=("http://127.0.0.1/callback", "http://localhost/callback"),
            ),
        }
    )
    # End users of the commerce API by subject; the authorization endpoint signs in the one named by
    # ``login_hint``, else the first.
    commerce_users: dict[str, CommerceUser] = Field(default_factory=default_users)
    token_lifetime_s: int = 3600
    tokens: TokenRegistry = Field(default_factory=TokenRegistry)
    # The ``iss`` of ID tokens and discovery; None: the auth mount's address as the request saw it.
    commerce_issuer: str | None = None
    commerce_code_lifetime_s: int = 60
    # A refresh token outlives its access token (§8).
    commerce_refresh_token_lifetime_s: int = 30 * 24 * 3600
    # True: a used refresh token is revoked and a new one returned; False: the same one stays valid.
    commerce_rotate_refresh_tokens: bool = True
    # Spoils ID tokens (or the redirect's state) so a client's checks can be tested; see sandbox.oidc.
    commerce_id_token_fault: IdTokenFault | None = None

    job_seconds: float = 3.0
    # The statuses an accepted newspaper order goes through, spread evenly over its job time (the last one
    # reached when the job is done). The spec names LOADED and CONTROL, neither their order nor a final
    # status, so by default an order stays LOADED, as one whose weights are completed by hand in the online
    # dispatch-list service does; e.g. LOADED,CONTROL,DONE plays a longer life.
    order_statuses: OrderStatuses = DEFAULT_ORDER_STATUSES
    # The spec spells the purchase output path both ways; the sandbox serves one so clients must cope.
    purchase_output_path_spelling: Literal["output-addresses", "outputaddresses"] = "output-addresses"
    structure_file_version: int = 1
    # Commerce API: where the endpoints the spec shows no path for are served, and whether personal
    # addresses spell the pickup-point and locker types as the spec does or as real answers do.
    commerce_paths: CommercePaths = Field(default_factory=CommercePaths)
    commerce_type_spelling: Literal["spec", "real"] = "spec"

    # "other": every registered guess (connectors.guesses) answered the other plausible way (sandbox.guesses).
    guesses: GuessMode = "ours"

    state_dir: Path | None = None
    # A file every API request is appended to as a JSON line (time, method, path, API, status, fault); None:
    # no log. See sandbox.request_log.
    request_log: Path | None = None
    faults: FaultPlan = Field(default_factory=FaultPlan)
    # The address the server listens on (None: served in-process) and the token that opens the /_sandbox
    # control endpoints when that address is not loopback (see sandbox.control).
    listen_host: str | None = None
    control_token: SecretStr | None = None
    clock: Callable[[], float] = time.time


# Where the other answers of the registered guesses put what a setting may move (sandbox.guesses): the paths
# the specification does not show, the output path's other spelling, a longer order life, the type names real
# answers use and a per-minute limit on individual queries.
OTHER_COMMERCE_PATHS = CommercePaths(
    same_day_path="/api/delivery/v1/acceptancepoints/sameday",
    pickup_prefix="/pickpost/v1",
    pickup_points_method="GET",
    pickup_points_path="/pickuppoints",
    barcode_path="/barcode/v1/labels",
    return_order_path="/delivery/collection/order/v2/returnorders",
)
OTHER_ORDER_STATUSES = ("LOADED", "CONTROL", "RELEASED")
OTHER_QUERIES_PER_MINUTE = 600


def with_other_answers(config: SandboxConfig) -> SandboxConfig:
    """``config`` answering every registered guess the other plausible way (``guesses="other"``): the
    settings a guess may move changed where the configuration left them as they were by default."""
    if config.guesses != "other":
        return config
    default = SandboxConfig()
    changes: dict[str, object] = {}
    if config.commerce_paths == default.commerce_paths:
        changes["commerce_paths"] = OTHER_COMMERCE_PATHS
    if config.order_statuses == default.order_statuses:
        changes["order_statuses"] = OTHER_ORDER_STATUSES
    if config.purchase_output_path_spelling == default.purchase_output_path_spelling:
        changes["purchase_output_path_spelling"] = "outputaddresses"
    if config.commerce_type_spelling == default.commerce_type_spelling:
        changes["commerce_type_spelling"] = "real"
    if config.max_queries_per_minute is None:
        changes["max_queries_per_minute"] = OTHER_QUERIES_PER_MINUTE
    if config.address_ping_answer == default.address_ping_answer:
        changes["address_ping_answer"] = "empty-json"
    for name, value in changes.items():
        setattr(config, name, value)
    return config
