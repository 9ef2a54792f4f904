"""A sandbox served over HTTP with credentials a test chooses, writing down everything that crosses the wire.

``python -m tests.e2e.recording_sandbox --port N --state-dir DIR --wire FILE --accounts JSON [--faults JSON]
[--echo]`` serves the sandbox of the three APIs (as ``postflows sandbox`` does) with the address-service
account and OAuth client secrets ``--accounts`` names, and appends one JSON line per request to ``FILE``:
method, path, query, request headers and body, answer status and ``Location``, and for the token endpoint
the answer's body. The issued access, refresh and ID tokens and the codes are read back from there, and so
is every URL, header and body the clients sent (see :mod:`tests.secret_scan`). With ``--echo`` a refused
client authentication and every HTTP 5xx answer quote the request, credentials included, and an HTTP 400 to
a request with Basic credentials says ``invalid login <user> password <password>``, as careless servers do:
what the clients make of such answers must not carry them on.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.secret_scan import WireRecord

if TYPE_CHECKING:
    from tests.e2e.conftest import ServedSandbox

TOKEN_PATH_SUFFIX = "/OAuth/token"


class WireRecorder:
    """ASGI middleware: one JSON line per HTTP request, written when its answer is complete (or broken).

    With ``echo``, answers that careless servers are known to fill with the request (a refused client
    authentication, an HTTP 5xx debug page, an HTTP 400 that names the login it refused) quote it: method,
    path, query, ``Authorization`` header and body, and the user and password of Basic credentials.
    """

    def __init__(self, app: ASGIApp, wire: Path, *, echo: bool = False) -> None:
        self.app = app
        self.wire = wire
        self.echo = echo

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent_body = bytearray()
        answer: dict[str, Any] = {"status": None, "location": None, "echoed": False}
        answer_body = bytearray()
        is_token_path = str(scope["path"]).endswith(TOKEN_PATH_SUFFIX)
        basic = any(
            name.lower() == b"authorization" and value[:6].lower() == b"basic "
            for name, value in scope["headers"]
        )

        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                sent_body.extend(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = answer["status"] = message["status"]
                for name, value in message.get("headers", []):
                    if name.lower() == b"location":
                        answer["location"] = value.decode("latin-1")
                if self.echo and (
                    status >= 500 or (is_token_path and status == 401) or (status == 400 and basic)
                ):
                    answer["echoed"] = True
                    return
            elif message["type"] == "http.response.body":
                if is_token_path:
                    answer_body.extend(message.get("body", b""))
                if answer["echoed"]:
                    if not message.get("more_body", False):
                        await _send_echo(send, answer["status"], _echo(scope, bytes(sent_body)))
                    return
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        finally:
            record = {
                "method": scope["method"],
                "path": scope["path"],
                "query": bytes(scope.get("query_string", b"")).decode("latin-1"),
                "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]],
                "body": sent_body.decode("latin-1"),
                "status": answer["status"],
                "location": answer["location"],
                "answer": answer_body.decode("utf-8", "replace") if is_token_path else None,
            }
            with self.wire.open("a", encoding="utf-8") as sink:
                sink.write(json.dumps(record) + "\n")


def _echo(scope: Scope, body: bytes) -> bytes:
    """An error answer quoting the request, as a debug page or a chatty authorization server would."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    text = body.decode("utf-8", "replace")
    form = {name: values[0] for name, values in parse_qs(text).items()}
    description = "request refused"
    if "client_secret" in form:
        description = f"Client authentication failed for client_secret {form['client_secret']}"
    scheme, _, credentials = (headers.get("authorization") or "").partition(" ")
    if scheme.lower() == "basic":
        user, _, password = base64.b64decode(credentials).decode("utf-8", "replace").partition(":")
        description = f"invalid login {user} password {password}"
    # What carries credentials first: a quoting client that cuts long bodies still sees them.
    quoted = {
        "body": text,
        "authorization": headers.get("authorization"),
        "method": scope["method"],
        "path": scope["path"],
        "query": bytes(scope.get("query_string", b"")).decode("latin-1"),
    }
    error = {"error": "invalid_client" if "client_secret" in form else "server_error"}
    return json.dumps({**error, "error_description": description, "request": quoted}).encode()


async def _send_echo(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def build_app(
    accounts: dict[str, str], state_dir: Path, wire: Path, faults: str | None, *, echo: bool = False
) -> ASGIApp:
    """The sandbox app with ``accounts`` (address_user, address_password, newspaper_client_id/secret,
    commerce_client_id/secret), wrapped in a :class:`WireRecorder`."""
    from sandbox.app import create_app
    from sandbox.config import COMMERCE_SCOPES, OAuthClient, SandboxConfig
    from sandbox.faults import FaultPlan

    config = SandboxConfig(
        address_user=accounts["address_user"],
        address_password=accounts["address_password"],
        oauth_clients={
            accounts["newspaper_client_id"]: OAuthClient(secret=accounts["newspaper_client_secret"]),
            accounts["commerce_client_id"]: OAuthClient(
                secret=accounts["commerce_client_secret"],
                scopes=COMMERCE_SCOPES,
                redirect_uris=("http://127.0.0.1/callback",),
            ),
        },
        job_seconds=1.0,
        faults=FaultPlan.load(faults),
        state_dir=state_dir,
    )
    return WireRecorder(create_app(config), wire, echo=echo)


@dataclass
class RecordingSandbox:
    """A running recording sandbox: its address and request counts, and the file of what it received."""

    served: ServedSandbox
    wire: Path

    def records(self) -> list[WireRecord]:
        return [WireRecord.from_json(line) for line in self.wire.read_text(encoding="utf-8").splitlines()]


@contextmanager
def recording_sandboxes(
    root: Path, accounts: dict[str, str], plans: dict[str, list[dict[str, Any]]]
) -> Iterator[dict[str, RecordingSandbox]]:
    """One recording sandbox with ``accounts`` per fault plan (by name), started side by side, quoting
    requests in refusals and 5xx answers; stopped when the block ends."""
    # The test side only: the sandbox process itself needs none of the test fixtures.
    from tests.e2e.conftest import API_PATH, ServedSandbox, base_environment, free_port, stop, wait_until_up

    account = (accounts["address_user"], accounts["address_password"])
    with ExitStack() as stack:
        booting = {}
        for name, faults in plans.items():
            workdir = root / f"sandbox-{name}"
            workdir.mkdir(parents=True)
            port, log = free_port(), workdir / "sandbox.log"
            command = [
                sys.executable, "-m", "tests.e2e.recording_sandbox", "--port", str(port),
                "--state-dir", str(workdir / "state"), "--wire", str(workdir / "wire.jsonl"),
                "--accounts", json.dumps(accounts), "--faults", json.dumps(faults), "--echo",
            ]  # fmt: skip
            with log.open("wb") as sink:
                process = subprocess.Popen(
                    command, cwd=workdir, env=base_environment(), stdout=sink, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            stack.callback(stop, process)
            booting[name] = (process, log, port, workdir)
        sandboxes = {}
        for name, (process, log, port, workdir) in booting.items():
            origin = f"http://127.0.0.1:{port}"
            wait_until_up(f"{origin}{API_PATH}/ping", process, log, timeout=60, auth=account)
            sandboxes[name] = RecordingSandbox(ServedSandbox(origin, process), workdir / "wire.jsonl")
        yield sandboxes


def main(argv: Sequence[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--wire", type=Path, required=True)
    parser.add_argument("--accounts", required=True, help="JSON object of the accounts (see build_app)")
    parser.add_argument("--faults", default=None, help="Fault plan (JSON)")
    parser.add_argument("--echo", action="store_true", help="Quote the request in refusals and 5xx answers")
    options = parser.parse_args(argv)
    accounts = json.loads(options.accounts)
    app = build_app(accounts, options.state_dir, options.wire, options.faults, echo=options.echo)
    uvicorn.run(app, host="127.0.0.1", port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
