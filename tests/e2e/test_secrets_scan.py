"""Every flow, and the commerce sign-in and refresh, run as ``postflows`` processes with recognisable fake
credentials against served sandboxes and the session's Prefect server, some of them failing (HTTP 401 for
each API, HTTP 500, a rejected order, an HTTP 400 that quotes the address-service password); then every
place a run leaves text is searched for every spelling of every credential (:mod:`tests.secret_scan`): the
processes' output, the workspaces' files (history database, results, summaries, ZIP members, the client's
PREFECT_HOME), the Prefect server's flow runs, task runs, states, logs and artifacts (REST API) and its whole
database, and what went over the wire to the sandboxes.

The sandboxes (:mod:`tests.e2e.recording_sandbox`) write down every request, so the issued access, refresh
and ID tokens and the authorization codes are read back from them and searched for too; their refusals of a
client secret and their HTTP 5xx answers quote the request, credentials included, as careless servers do,
and the echoing one's HTTP 400 names the login it refused, password included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from tests.e2e.conftest import (
    API_PATH,
    EXAMPLE,
    POSTGRES_URL_ENV,
    SUMMARY_LINES,
    USER,
    CliWorkspace,
    PrefectServer,
    free_port,
    json_block,
    stop,
)
from tests.e2e.recording_sandbox import RecordingSandbox, recording_sandboxes
from tests.e2e.secret_stores import scan_prefect, scan_workspaces
from tests.e2e.test_commerce_cli import sign_in_url
from tests.secret_scan import (
    Finding,
    Secret,
    SecretScan,
    WireRecord,
    basic_authorization,
    issued_secrets,
    postgres_tables,
    wire_findings,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
UUID = re.compile(r"/runs/flow-run/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")

# Recognisable, and with the characters that encodings change (/ + : @ % & = and a space).
ADDRESS_PASSWORD = "Canary-AddrPw/7+x:y@z %25-0f3a9"
NEWSPAPER_CLIENT = ("canary-newspaper-client", "Canary-NewsSecret/8+q=r&s-51c2e")
COMMERCE_CLIENT = ("canary-commerce-client", "Canary-CommSecret/9+t=u&v-7d4b6")
WRONG_ADDRESS_PASSWORD = "Canary-WrongAddrPw/1+a@b-8e21"
WRONG_NEWSPAPER_SECRET = "Canary-WrongNewsSecret/2+b=c-3d4"
WRONG_COMMERCE_SECRET = "Canary-WrongCommSecret/3+c&d-e5f6"
# With a PostgreSQL server at hand, these groups keep their run history there, reached as a role with a
# recognisable password (POSTFLOWS_DATABASE_URL), and `postflows demo` runs too.
HISTORY_ROLE = "postflows_canary"
HISTORY_PASSWORD = "Canary-DbPw/4+g:h@i &9a1b~"
POSTGRES_HISTORY = (
    "newspaper-master-data",
    "structure-files",
    "401 address service",
    "500 newspaper",
    "history report",
    "demo",
)
CONFIGURED = (
    Secret("address-service password", ADDRESS_PASSWORD),
    Secret("newspaper client secret", NEWSPAPER_CLIENT[1]),
    Secret("commerce client secret", COMMERCE_CLIENT[1]),
    Secret("wrong address-service password", WRONG_ADDRESS_PASSWORD),
    Secret("wrong newspaper client secret", WRONG_NEWSPAPER_SECRET),
    Secret("wrong commerce client secret", WRONG_COMMERCE_SECRET),
    Secret("Basic authorization", basic_authorization(USER, ADDRESS_PASSWORD).split()[1]),
    Secret("wrong Basic authorization", basic_authorization(USER, WRONG_ADDRESS_PASSWORD).split()[1]),
    Secret("history database password", HISTORY_PASSWORD),
)
ACCOUNTS = {
    "address_user": USER,
    "address_password": ADDRESS_PASSWORD,
    "newspaper_client_id": NEWSPAPER_CLIENT[0],
    "newspaper_client_secret": NEWSPAPER_CLIENT[1],
    "commerce_client_id": COMMERCE_CLIENT[0],
    "commerce_client_secret": COMMERCE_CLIENT[1],
}
# The faulty sandbox: the batch's two deletions fail (its files are left for the clean-up), every newspaper
# call answers HTTP 500, and one commerce call answers 401 as if the token had expired. The echoing one
# answers every address-service call with HTTP 400 "invalid login <user> password <password>".
FAULTS = [
    {"api": "address", "endpoint": "deletefile/*", "kind": "http_status", "value": 500, "times": 2},
    {"api": "newspaper", "endpoint": "*", "kind": "http_status", "value": 500, "times": None},
    {"api": "commerce", "endpoint": "*", "kind": "http_status", "value": 401, "times": 1},
]
ECHOING = [{"api": "address", "endpoint": "*uploadfile", "kind": "http_status", "value": 400, "times": None}]
SAME_DAY_ADDRESS = ("--zip", "8001", "--city", "Zürich", "--street", "Bahnhofstrasse", "--house-number", "1")
FAIL_FAST = {"POSTFLOWS_HTTP_MAX_ATTEMPTS": "1", "POSTFLOWS_TASK_RETRIES": "0"}


@contextmanager
def canary_history_databases(groups: tuple[str, ...]) -> Iterator[dict[str, tuple[str, str]]]:
    """Per group, a new PostgreSQL database owned by :data:`HISTORY_ROLE`: (the URL the group's runs use,
    with :data:`HISTORY_PASSWORD`; the URL this test reads it with). Dropped when the block ends; none
    without a server (``POSTFLOWS_TEST_POSTGRES_URL``)."""
    server_url = os.environ.get(POSTGRES_URL_ENV)
    if not server_url:
        yield {}
        return
    server = make_url(server_url)
    names = {group: f"postflows_secrets_{uuid.uuid4().hex[:12]}" for group in groups}
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(
                f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{HISTORY_ROLE}') "
                f"THEN CREATE ROLE {HISTORY_ROLE} LOGIN; END IF; END $$"
            )
            connection.exec_driver_sql(f"ALTER ROLE {HISTORY_ROLE} PASSWORD '{HISTORY_PASSWORD}'")
            for name in names.values():
                connection.exec_driver_sql(f'CREATE DATABASE "{name}" OWNER {HISTORY_ROLE}')
        yield {
            group: (
                server.set(username=HISTORY_ROLE, password=HISTORY_PASSWORD, database=name).render_as_string(
                    hide_password=False
                ),
                server.set(database=name).render_as_string(hide_password=False),
            )
            for group, name in names.items()
        }
    finally:
        with admin.connect() as connection:
            for name in names.values():
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def api_settings(origin: str) -> dict[str, str]:
    """The newspaper and commerce settings pointing at a served sandbox, with the canary clients."""
    return {
        "POSTFLOWS_NEWSPAPER_URL": f"{origin}/newspaper",
        "POSTFLOWS_NEWSPAPER_TOKEN_URL": f"{origin}/auth/OAuth/token",
        "POSTFLOWS_NEWSPAPER_CLIENT_ID": NEWSPAPER_CLIENT[0],
        "POSTFLOWS_NEWSPAPER_CLIENT_SECRET": NEWSPAPER_CLIENT[1],
        "POSTFLOWS_COMMERCE_URL": f"{origin}/commerce",
        "POSTFLOWS_COMMERCE_AUTH_URL": f"{origin}/auth",
        "POSTFLOWS_COMMERCE_USERINFO_URL": f"{origin}/auth/userinfo",
        "POSTFLOWS_COMMERCE_CLIENT_ID": COMMERCE_CLIENT[0],
        "POSTFLOWS_COMMERCE_CLIENT_SECRET": COMMERCE_CLIENT[1],
        "POSTFLOWS_COMMERCE_REDIRECT_URI": f"http://127.0.0.1:{free_port()}/callback",
    }


@dataclass
class Run:
    """One ``postflows`` process of the scan and how it ended."""

    group: str
    args: tuple[str, ...]
    result: subprocess.CompletedProcess[str]
    seconds: float

    @property
    def name(self) -> str:
        return f"{self.group}: postflows {' '.join(self.args[:2])}"

    @property
    def reason(self) -> str:
        """The one-line reason of a failed run."""
        lines = [line for line in self.result.stderr.splitlines() if line.startswith("failed:")]
        return lines[-1] if lines else ""


Steps = Callable[[CliWorkspace, "Runner"], object]


@dataclass
class Group:
    """Commands run one after the other in one workspace (a later one may use an earlier one's output)."""

    name: str
    sandbox: str
    steps: Steps
    password: str = ADDRESS_PASSWORD
    env: dict[str, str] = field(default_factory=dict)


def _commands(out: Callable[[str], str], *, demo: bool) -> list[Group]:
    """Every flow, the sign-in and refresh path, and the failing runs, as groups of commands; with ``demo``
    ``postflows demo`` too."""

    def one(*args: str) -> Steps:
        def steps(workspace: CliWorkspace, run: Runner) -> None:
            run(*args)

        return steps

    def order_then_reports(workspace: CliWorkspace, run: Runner) -> None:
        order = run("newspaper-order", str(EXAMPLES / "newspaper-order.json"), "--out", out("order"))
        order_id = json_block(order.result.stdout)["order_id"]
        run("newspaper-reports", str(order_id), "--out", out("reports"))

    def batch_then_cleanup(workspace: CliWorkspace, run: Runner) -> None:
        run("address-batch", str(EXAMPLE), "--out", out("leftover-batch"))
        run("cleanup", "--older-than", "0")

    def batch_then_report(workspace: CliWorkspace, run: Runner) -> None:
        run("address-batch", str(EXAMPLE), "--out", out("report-batch"))
        run("report", "--out", out("history-report"))  # names its history: the URL, never its password

    def sign_in_and_refresh(workspace: CliWorkspace, run: Runner) -> None:
        run.sign_in()
        run("commerce", "addresses", "--json")
        run("commerce", "userinfo", "--json")
        run("info")

    def batch_then_history(workspace: CliWorkspace, run: Runner) -> None:
        run("address-batch", str(EXAMPLE), "--out", out("wrong-password"))
        run("history")
        run("history", "1")

    rejected_order = json.loads((EXAMPLES / "newspaper-order.json").read_text(encoding="utf-8"))
    rejected_order["basisInformation"]["newspaperNumber"] = "4712"  # no sort file: refused with 0003

    def rejected(workspace: CliWorkspace, run: Runner) -> None:
        path = workspace.root / "rejected-order.json"
        path.write_text(json.dumps(rejected_order), encoding="utf-8")
        run("newspaper-order", str(path), "--out", out("rejected-order"))

    commerce_file = str(EXAMPLES / "commerce-addresses.csv")
    return [
        Group("address-batch", "clean", one("address-batch", str(EXAMPLE), "--out", out("batch"))),
        Group("address-query", "clean", one("address-query", str(EXAMPLE), "--out", out("query"))),
        Group("newspaper-order+reports", "clean", order_then_reports),
        Group("newspaper-master-data", "clean", one("newspaper-sync", "4711", "--out", out("sync"))),
        Group(
            "newspaper-statistics",
            "clean",
            one("newspaper-statistics", str(EXAMPLES / "statistics.csv"), "--out", out("statistics")),
        ),
        Group(
            "address-purchase",
            "clean",
            one(
                "address-purchase",
                str(EXAMPLES / "purchase-addresses.csv"),
                "--params",
                str(EXAMPLES / "purchase.json"),
                "--out",
                out("purchase"),
            ),
        ),
        Group("structure-files", "clean", one("structure-files", "9", "--out", out("structure"))),
        Group(
            "address-validation",
            "clean",
            one("address-validation", commerce_file, "--out", out("validation")),
        ),
        Group(
            "deliverability-check",
            "clean",
            one("deliverability", commerce_file, "--days", "3", "--out", out("deliverability")),
        ),
        Group(
            "deliverability-check on dates",
            "clean",
            one("deliverability", commerce_file, "--dates", "2026-03-02,2026-03-04", "--out", out("dates")),
        ),
        Group("logistic-product", "clean", one("commerce", "product", "SD2", "--out", out("product"))),
        Group(
            "same-day-acceptance",
            "clean",
            one("commerce", "same-day", *SAME_DAY_ADDRESS, "--date", "2026-03-03", "--out", out("same-day")),
        ),
        Group("delivery-reference-sync", "clean", one("delivery-sync", "--out", out("delivery-sync"))),
        Group(
            "pickup-registration",
            "clean",
            one("pickup-register", str(EXAMPLES / "pickup-users.csv"), "--out", out("pickup")),
        ),
        Group(
            "pickup-points",
            "clean",
            one("pickup-points", str(EXAMPLES / "pickup-locations.csv"), "--out", out("pickup-points")),
        ),
        Group(
            "address-labels",
            "clean",
            one("address-labels", str(EXAMPLES / "address-labels.json"), "--out", out("labels")),
        ),
        Group(
            "return-order",
            "clean",
            one("return-order", str(EXAMPLES / "return-order.json"), "--out", out("return-order")),
        ),
        Group("commerce sign-in and refresh", "clean", sign_in_and_refresh),
        Group("history report", "clean", batch_then_report),
        # Failing runs: a wrong credential for each API, a refused order, an HTTP 500.
        Group("401 address service", "clean", batch_then_history, password=WRONG_ADDRESS_PASSWORD),
        Group(
            "401 newspaper",
            "clean",
            one("structure-files", "9", "--out", out("wrong-newspaper-secret")),
            env={"POSTFLOWS_NEWSPAPER_CLIENT_SECRET": WRONG_NEWSPAPER_SECRET},
        ),
        Group(
            "401 commerce",
            "clean",
            one("delivery-sync", "--out", out("wrong-commerce-secret")),
            env={"POSTFLOWS_COMMERCE_CLIENT_SECRET": WRONG_COMMERCE_SECRET},
        ),
        Group("rejected order", "clean", rejected),
        Group("unknown product", "clean", one("commerce", "product", "XYZ", "--out", out("unknown-product"))),
        Group(
            "500 newspaper", "faulty", one("newspaper-sync", "4711", "--out", out("sync-500")), env=FAIL_FAST
        ),
        Group("left files, cleanup", "faulty", batch_then_cleanup, env=FAIL_FAST),
        Group("refused ID token", "faulty", lambda workspace, run: run.sign_in()),
        Group(
            "400 address service echoing the password",
            "echoing",
            one("address-batch", str(EXAMPLE), "--out", out("echoed-password")),
            env=FAIL_FAST,
        ),
        Group(
            "401 mid-run commerce",
            "faulty",
            one("address-validation", commerce_file, "--out", out("validation-401")),
        ),
        *([Group("demo", "clean", one("demo", "--out", out("demo")))] if demo else []),
    ]


class Runner:
    """Runs a group's commands in its workspace and keeps every :class:`Run`."""

    def __init__(self, group: Group, workspace: CliWorkspace, runs: list[Run]) -> None:
        self.group, self.workspace, self.runs = group, workspace, runs

    def __call__(self, *args: str) -> Run:
        started = time.monotonic()
        return self._record(args, self.workspace.run(*args, timeout=240), started)

    def sign_in(self) -> Run:
        """``postflows commerce-login``, this test playing the browser (see test_commerce_cli)."""
        started = time.monotonic()
        login = self.workspace.start("commerce-login", "--timeout", "60")
        try:
            page = httpx.get(sign_in_url(login), follow_redirects=True, timeout=30)
            assert page.status_code == 200, page.text
            stdout, stderr = login.communicate(timeout=60)
        finally:
            stop(login)
        result = subprocess.CompletedProcess(login.args, login.returncode, stdout, stderr)
        return self._record(("commerce-login",), result, started)

    def _record(self, args: tuple[str, ...], result: subprocess.CompletedProcess[str], started: float) -> Run:
        run = Run(self.group.name, args, result, time.monotonic() - started)
        self.runs.append(run)
        return run


@dataclass
class ScanResult:
    runs: list[Run]
    workspaces: list[CliWorkspace]
    sandboxes: dict[str, RecordingSandbox]
    secrets: list[Secret]
    findings: list[Finding]
    wire: list[Finding]
    scan: SecretScan
    prefect_rows: dict[str, int]
    phases: dict[str, float]
    postgres_history: bool


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory, prefect_server: PrefectServer) -> Iterator[ScanResult]:
    started = time.monotonic()
    root = tmp_path_factory.mktemp("secrets")
    with (
        recording_sandboxes(root, ACCOUNTS, {"clean": [], "faulty": FAULTS, "echoing": ECHOING}) as sandboxes,
        canary_history_databases(POSTGRES_HISTORY) as histories,
    ):
        # The faulty sandbox's ID tokens carry another nonce: its sign-in is refused after the code exchange.
        faulty_auth = f"{sandboxes['faulty'].served.origin}/auth/_sandbox/id-token-fault"
        httpx.put(faulty_auth, json={"fault": "nonce"}, timeout=5).raise_for_status()
        phases = {"set-up": time.monotonic() - started}
        runs, workspaces = _run_groups(root, sandboxes, prefect_server, histories)
        phases["runs"] = time.monotonic() - started - sum(phases.values())
        records = {name: sandbox.records() for name, sandbox in sandboxes.items()}
        secrets = _every_secret(records)
        scan = SecretScan(secrets)
        _scan_outputs(scan, runs)
        scan_workspaces(scan, workspaces, root / "out")
        for _, read_url in histories.values():
            for table, rows in postgres_tables(read_url).items():
                for row in rows:
                    scan.scan("run history (PostgreSQL)", table, row)
        flow_runs = sorted({id_ for run in runs for id_ in UUID.findall(run.result.stderr)})
        prefect_rows = scan_prefect(scan, prefect_server, flow_runs)
        basic = {basic_authorization(USER, pw): API_PATH for pw in (ADDRESS_PASSWORD, WRONG_ADDRESS_PASSWORD)}
        wire = [finding for logged in records.values() for finding in wire_findings(logged, secrets, basic)]
        phases["scan"] = time.monotonic() - started - sum(phases.values())
        result = ScanResult(
            runs,
            workspaces,
            sandboxes,
            secrets,
            scan.findings,
            wire,
            scan,
            prefect_rows,
            phases,
            bool(histories),
        )
        SUMMARY_LINES.append(_report(result, records))
        yield result


def _run_groups(
    root: Path,
    sandboxes: dict[str, RecordingSandbox],
    prefect_server: PrefectServer,
    histories: dict[str, tuple[str, str]],
) -> tuple[list[Run], list[CliWorkspace]]:
    """Every group of :func:`_commands` at once, each in its own workspace; the runs and the workspaces."""
    runs: list[Run] = []
    workspaces: list[CliWorkspace] = []

    def run_group(group: Group) -> None:
        sandbox = sandboxes[group.sandbox].served
        env = {**api_settings(sandbox.origin), **group.env}
        if group.name in histories:
            env["POSTFLOWS_DATABASE_URL"] = histories[group.name][0]
        where = root / re.sub(r"[^a-z0-9]+", "-", group.name.lower())
        workspace = CliWorkspace(where, sandbox, prefect_server, password=group.password, extra_env=env)
        workspaces.append(workspace)
        group.steps(workspace, Runner(group, workspace, runs))

    groups = _commands(lambda name: str(root / "out" / name), demo="demo" in histories)
    with ThreadPoolExecutor(max_workers=len(groups)) as pool:
        for done in [pool.submit(run_group, group) for group in groups]:
            done.result()
    return runs, workspaces


def _every_secret(records: dict[str, list[WireRecord]]) -> list[Secret]:
    """The configured credentials, and what the sandboxes issued or received besides."""
    secrets = list(CONFIGURED)
    known = {secret.value for secret in secrets}
    for logged in records.values():
        for secret in issued_secrets(logged):
            if secret.value not in known:
                secrets.append(secret)
                known.add(secret.value)
    return secrets


def _scan_outputs(scan: SecretScan, runs: list[Run]) -> None:
    for run in runs:
        scan.scan("process output", f"stdout of {run.name}", run.result.stdout)
        scan.scan("process output", f"stderr of {run.name}", run.result.stderr)


def _report(result: ScanResult, records: dict[str, list[WireRecord]]) -> str:
    kinds: dict[str, int] = {}
    for secret in result.secrets:
        kinds[secret.kind] = kinds.get(secret.kind, 0) + 1
    slowest = max(result.runs, key=lambda run: run.seconds)
    requests = sum(len(r) for r in records.values())
    groups = len({run.group for run in result.runs})
    phases = ", ".join(f"{phase} {seconds:.0f} s" for phase, seconds in result.phases.items())
    return (
        f"secret scan: {len(result.runs)} postflows processes in {groups} groups, "
        f"{sum(result.phases.values()):.0f} s ({phases}; "
        f"slowest process: {slowest.name} {slowest.seconds:.0f} s); {len(result.secrets)} "
        f"secrets ({', '.join(f'{n} {k}' for k, n in kinds.items())}); read {result.scan.summary()}; "
        f"Prefect API/DB {result.prefect_rows}; {requests} requests on the wire; "
        f"{len(result.findings) + len(result.wire)} findings"
    )


def test_every_flow_ran_and_the_failing_ones_failed_naming_the_cause(scanned: ScanResult) -> None:
    failing = {  # (cause named, exit code): a password the ping finds refused exits 2
        ("401 address service", "address-batch"): ("Status 101", 2),
        ("401 newspaper", "structure-files"): ("401", 1),
        ("401 commerce", "delivery-sync"): ("401", 1),
        ("rejected order", "newspaper-order"): ("0003", 1),
        ("unknown product", "commerce"): ("no such product 'XYZ'", 1),
        ("500 newspaper", "newspaper-sync"): ("500", 1),
        ("refused ID token", "commerce-login"): ("nonce", 1),
        ("400 address service echoing the password", "address-batch"): ("HTTP 400", 1),
    }
    # These answers quoted the request, credentials included (--echo): the reason quotes them scrubbed.
    echoed = {"401 newspaper", "401 commerce", "500 newspaper", "400 address service echoing the password"}
    for run in scanned.runs:
        expected = failing.get((run.group, run.args[0]))
        if expected is not None:
            cause, exit_code = expected
            assert run.result.returncode == exit_code, run.result.stdout + run.result.stderr
            assert cause in run.reason, run.result.stderr
            if run.group in echoed:
                assert "[redacted]" in run.reason or "**********" in run.reason, run.reason
        else:
            assert run.result.returncode == 0, f"{run.name}\n{run.result.stdout}\n{run.result.stderr}"
    faulty = scanned.sandboxes["faulty"]
    assert faulty.served.count("deletefile") >= 4  # two refused in the batch, two done by the clean-up
    # The 401 in the middle of a run: the commerce client asked for a second token and went on.
    records = faulty.records()
    assert any(r.path.startswith("/commerce/") and r.status == 401 for r in records)
    commerce_grants = [r for r in records if r.is_token_request and "client_credentials" in r.body]
    assert len([r for r in commerce_grants if COMMERCE_CLIENT[0] in r.body]) >= 2


def test_the_sandboxes_issued_every_kind_of_token(scanned: ScanResult) -> None:
    kinds = {secret.kind for secret in scanned.secrets}
    assert {"access token", "refresh token", "ID token", "authorization code"} <= kinds
    refresh_tokens = [secret for secret in scanned.secrets if secret.kind == "refresh token"]
    assert len(refresh_tokens) >= 4  # the two sign-ins' and two rotated ones


def test_no_secret_in_outputs_files_or_the_prefect_server(scanned: ScanResult) -> None:
    for store in (
        "process output",
        "run history",
        "summaries",
        "result files",
        "Prefect API",
        "Prefect database",
    ):
        assert scanned.scan.read[store].bytes > 0, store
    assert scanned.prefect_rows["logs"] > 0 and scanned.prefect_rows["artifacts"] > 0
    assert scanned.prefect_rows["failed flow runs"] >= 5
    if scanned.postgres_history:
        assert scanned.scan.read["run history (PostgreSQL)"].items > 0
    assert not scanned.findings, "\n".join(map(str, scanned.findings))


def test_no_credential_in_a_url_header_or_body_it_does_not_belong_in(scanned: ScanResult) -> None:
    assert not scanned.wire, "\n".join(map(str, scanned.wire))
