"""``postflows doctor``: what it finds and how it says so. The checks that need no request to a postal API
live here (each API's settings, the run history, the Prefect API); those that ask the services live in
:mod:`postflows.doctor_live`. A finding is a :class:`Check` (passed or not, what was answered, the setting
to change) or an :class:`Observed` guess of the register (:mod:`connectors.guesses`); every line and
``doctor.json`` pass the secret scrubber before they leave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.guesses import Guess
from core.json_text import json_text
from core.redaction import redact
from runtime.endpoints import Api, ConfigurationError, api_url, describe_endpoint, require_encrypted
from runtime.privacy import masked_url

if TYPE_CHECKING:
    from runtime.settings import Settings

APIS: tuple[Api, ...] = ("address-service", "newspaper", "commerce")
LABELS: dict[Api, str] = {
    "address-service": "address service",
    "newspaper": "newspaper API",
    "commerce": "commerce API",
}
REPORT_FILE = "doctor.json"


@dataclass(frozen=True)
class Check:
    """One thing checked: whether it passed, what was answered or found, and the setting to change when it
    did not (``fix``: "check POSTFLOWS_…"; empty when ``answered`` names it already)."""

    name: str
    ok: bool
    answered: str
    fix: str = ""

    def line(self) -> str:
        return f"{self.name}: {self.answered}" + (f" — {self.fix}" if self.fix and not self.ok else "")

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "answered": self.answered, "fix": self.fix}


@dataclass(frozen=True)
class Observed:
    """What a service answered where a registered guess is at stake: ``holds`` True or False, or None when
    this run could not see it (``seen`` says why)."""

    guess: Guess
    holds: bool | None
    seen: str

    def line(self) -> str:
        guess = self.guess
        if self.holds is None:
            return f"{guess.id}: not observed ({self.seen})"
        if self.holds:
            return f"{guess.id}: {self.seen} — our guess holds: {guess.assumption}"
        setting = f"set {guess.setting}" if guess.setting else "nothing to set"
        return (
            f"{guess.id}: {self.seen} — our guess does not hold: {guess.assumption}; the client: "
            f"{guess.otherwise}; {setting}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"holds": self.holds, "seen": self.seen}


@dataclass
class ApiReport:
    """What the doctor found of one API: where its calls go, its checks and the guesses it observed.
    ``reachable``: whether the service answered at all (None: it was not asked)."""

    api: Api
    where: str
    sandbox: bool
    checks: list[Check] = field(default_factory=list)
    observed: list[Observed] = field(default_factory=list)
    reachable: bool | None = None

    @property
    def label(self) -> str:
        return LABELS[self.api]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def failures(self) -> list[str]:
        """One line per failed check, naming the API: what it answered and the setting to change."""
        label = f"{self.label} (embedded sandbox)" if self.sandbox else self.label
        return [f"{label}: {check.answered}" + _fix(check) for check in self.checks if not check.ok]

    def as_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "sandbox": self.sandbox,
            "reachable": self.reachable,
            "ok": self.ok,
            "checks": [check.as_dict() for check in self.checks],
            "guesses": {seen.guess.id: seen.as_dict() for seen in self.observed},
        }


def _fix(check: Check) -> str:
    return f" — {check.fix}" if check.fix else ""


@dataclass
class DoctorReport:
    """Everything one ``postflows doctor`` found: per API, then the run history and the Prefect API."""

    live: bool
    apis: list[ApiReport]
    local: list[Check]

    @property
    def ok(self) -> bool:
        return all(api.ok for api in self.apis) and all(check.ok for check in self.local)

    def lines(self) -> list[str]:
        """The report as printed: each API's heading (where its calls go) and its findings, indented."""
        lines: list[str] = []
        for api in self.apis:
            lines.append(f"{api.where}")
            lines += [f"  {check.line()}" for check in api.checks]
            lines += [f"  guess {seen.line()}" for seen in api.observed]
        lines += [check.line() for check in self.local]
        return [redact(line) for line in lines]

    def failures(self) -> list[str]:
        failed = [line for api in self.apis for line in api.failures()]
        failed += [check.line() for check in self.local if not check.ok]
        return [redact(line) for line in failed]

    def as_json(self) -> str:
        """Strict JSON (no NaN or Infinity), without any registered secret."""
        document = {
            "live": self.live,
            "ok": self.ok,
            "apis": {api.api: api.as_dict() for api in self.apis},
            "local": {check.name: check.as_dict() for check in self.local},
        }
        return redact(json_text(document, indent=2)) + "\n"

    def write(self, out: Path) -> Path:
        """Write ``doctor.json`` into ``out`` (created); returns its path."""
        out.mkdir(parents=True, exist_ok=True)
        path = out / REPORT_FILE
        path.write_text(self.as_json(), encoding="utf-8")
        return path


def api_report(settings: Settings, api: Api) -> ApiReport:
    """The report of ``api`` begun with its settings check; where its calls go heads it."""
    sandbox = api_url(settings, api) is None
    report = ApiReport(api, describe_endpoint(settings, api), sandbox)
    report.checks.append(settings_check(settings, api))
    return report


def settings_check(settings: Settings, api: Api) -> Check:
    """Whether ``api``'s settings are complete: nothing is needed for the embedded sandbox; a real service
    needs its credentials and token or auth address (and the address assistant's own address), each
    encrypted unless ``POSTFLOWS_ALLOW_HTTP``."""
    from runtime.endpoints import require_sandbox_allowed, require_settings

    if api_url(settings, api) is None:
        try:
            require_sandbox_allowed(settings, api)  # POSTFLOWS_SANDBOX=0 refuses it
        except ConfigurationError as error:
            return Check("settings", False, _one_line(error))
        return Check("settings", True, "none needed: the embedded sandbox's published test account is used")
    block = settings.credentials_block
    try:
        require_settings(settings, api, block_may_fill=bool(block))
        if api == "address-service":
            _require_assistant_url(settings)
    except ConfigurationError as error:
        return Check("settings", False, _one_line(error))
    return Check(
        "settings", True, "complete" + (f" (unset credentials come from block {block!r})" if block else "")
    )


def _require_assistant_url(settings: Settings) -> None:
    """The address assistant has no test environment (§4.4): with a real batch URL, its production address
    must be named."""
    assistant = settings.address_service.assistant_url
    if not assistant:
        raise ConfigurationError(
            "POSTFLOWS_ADDRESS_ASSISTANT_URL must be set when POSTFLOWS_ADDRESS_SERVICE_URL points at a real "
            "service: the address assistant has no test environment, its production address is used (§4.4)"
        )
    if not settings.allow_http:
        require_encrypted("POSTFLOWS_ADDRESS_ASSISTANT_URL", assistant)


def history_check(settings: Settings) -> Check:
    """The run history opened as ``postflows history`` opens it (created and migrated on first use)."""
    from postflows.run_list import list_runs

    url = settings.effective_database_url
    where = masked_url(url)
    try:
        page = list_runs(url, limit=1)
    except Exception as error:  # noqa: BLE001 - any failure to open the history is what this check reports
        setting = "POSTFLOWS_DATABASE_URL" if settings.database_url else "POSTFLOWS_DATA_DIR"
        return Check(
            "run history", False, f"{where} cannot be reached ({_first_line(error)})", f"check {setting}"
        )
    newest = f"newest run {page.runs[0].id}" if page.runs else "no run recorded yet"
    return Check("run history", True, f"{where}: reachable, {newest}")


def prefect_check(settings: Settings) -> Check:
    """The Prefect API flow runs report to: a configured one must answer its health check; without one,
    each flow command starts a temporary server (or uses the data dir's local server when it runs)."""
    from postflows.prefect_api import configured_api_url, prefect_api
    from postflows.prefect_profile import PROFILE_SOURCE
    from postflows.prefect_server import answers

    configured = configured_api_url()
    if configured is not None and configured[1] != PROFILE_SOURCE:
        url, source = configured
        where = f"{masked_url(url)} ({source})"
        if answers(url):
            return Check("Prefect API", True, f"{where} answers")
        return Check("Prefect API", False, f"{where} does not answer its health check", f"check {source}")
    api = prefect_api(settings.data_dir)
    if api.url is None:
        return Check(
            "Prefect API",
            True,
            "none configured (PREFECT_API_URL is not set): each flow command starts a temporary local server "
            "for its run (`postflows server start` keeps one running)",
        )
    return Check("Prefect API", True, f"{masked_url(api.url)} ({api.source}) answers")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    return _one_line(f"{type(error).__name__}: {first}"[:300])


def _one_line(error: BaseException | str) -> str:
    return " ".join(redact(str(error)).split())
