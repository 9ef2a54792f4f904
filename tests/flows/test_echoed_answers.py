"""Services whose answers echo the client secret and the request's ``Authorization`` header: every flow that
keeps answers as received (newspaper order and reports, address labels, return order, pickup points, the
address service's batch download, written as it streams) leaves
neither the secret nor the bearer token in any file under the out dir or the data dir."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import httpx
import pytest

from flows.address_batch import address_batch
from flows.address_labels import address_labels
from flows.newspaper_order import newspaper_order
from flows.newspaper_reports import newspaper_reports
from flows.pickup_points import pickup_points
from flows.return_order import return_order
from runtime.settings import (
    SANDBOX_ADDRESS_PASSWORD,
    SANDBOX_COMMERCE_CLIENT_SECRET,
    SANDBOX_NEWSPAPER_CLIENT_SECRET,
)
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_newspaper_order import THREE_STATUSES, TO_DONE, order_body, write_order
from tests.secret_scan import Secret, SecretScan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ECHO = "echo"


class EchoingTransport(httpx.AsyncBaseTransport):
    """The sandbox, adding to every JSON object it answers to a bearer request the client secret ``secret``
    and the request's ``Authorization`` header, as a careless service does; remembers every token it saw."""

    def __init__(self, inner: httpx.AsyncBaseTransport, secret: str) -> None:
        self.inner = inner
        self.secret = secret
        self.tokens: set[str] = set()
        self.echoed = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        authorization = request.headers.get("Authorization", "")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or "json" not in response.headers.get("content-type", ""):
            return response
        self.tokens.add(token)
        body = json.loads(await response.aread())
        if not isinstance(body, dict):
            return response
        body[ECHO] = {
            "authorization": authorization,
            "clientSecret": self.secret,
            "note": f"you sent {authorization} with client secret {self.secret}",
        }
        self.echoed += 1
        headers = [
            (k, v) for k, v in response.headers.items() if k not in ("content-length", "content-encoding")
        ]
        return httpx.Response(
            response.status_code, headers=headers, content=json.dumps(body).encode(), request=request
        )


@pytest.fixture
def echoing(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> EchoingTransport:
    """The sandbox echoing the client secret of the API the test uses (``newspaper`` in its name or not)."""
    newspaper = "newspaper" in request.node.name
    secret = SANDBOX_NEWSPAPER_CLIENT_SECRET if newspaper else SANDBOX_COMMERCE_CLIENT_SECRET
    transport = EchoingTransport(sandbox.transport, secret)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: transport)
    return transport


def _assert_clean(echoing: EchoingTransport, *folders: Path, echoed: list[Path]) -> None:
    """No file under ``folders`` holds a client secret or a bearer token seen; each of ``echoed`` (answers
    kept as received) shows the echo, scrubbed."""
    assert echoing.tokens and echoing.echoed, "the service echoed nothing"
    secrets = [
        Secret("client secret", echoing.secret),
        *(Secret("bearer token", token) for token in echoing.tokens),
    ]
    scan = SecretScan(secrets)
    files = [path for folder in folders for path in folder.rglob("*") if path.is_file()]
    for path in files:
        scan.scan_file(str(path.parent), path)
    assert not scan.findings, "\n".join(map(str, scan.findings))
    for path in echoed:
        kept = json.loads(path.read_bytes())
        assert kept[ECHO]["authorization"] == "Bearer [redacted]", path
        assert kept[ECHO]["clientSecret"] == "[redacted]", path
        assert kept[ECHO]["note"] == "you sent Bearer [redacted] with client secret [redacted]", path


async def test_a_newspaper_order_and_its_reports_keep_no_echoed_credential(
    sandbox: Sandbox, echoing: EchoingTransport, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.config.order_statuses = THREE_STATUSES
    out = tmp_path / "out"
    summary = await call(newspaper_order, write_order(tmp_path, order_body()), out, **TO_DONE)
    assert summary.status == "DONE"
    await call(newspaper_reports, summary.order_id, tmp_path / "reports")
    kept = [
        out / name for name in ("delivery-note.response.json", "status.json", "summary.json", "sendings.json")
    ]
    kept.append(tmp_path / "reports" / "status.json")
    _assert_clean(echoing, out, tmp_path / "reports", flow_env, echoed=kept)


async def test_labels_return_orders_and_pickup_points_keep_no_echoed_credential(
    echoing: EchoingTransport, flow_env: Path, tmp_path: Path
) -> None:
    await call(address_labels, EXAMPLES / "address-labels.json", tmp_path / "labels")
    await call(return_order, EXAMPLES / "return-order.json", tmp_path / "return")
    await call(pickup_points, EXAMPLES / "pickup-locations.csv", tmp_path / "points")
    kept = [
        tmp_path / "labels" / "label-1.json",
        tmp_path / "return" / "return-order.json",
        *sorted((tmp_path / "points" / "answers").glob("row-*.json")),
        *sorted(flow_env.rglob("*.answer")),
    ]
    assert len(kept) >= 5, kept
    _assert_clean(echoing, tmp_path, echoed=kept)
    # A resumed run takes the kept (scrubbed) answers: their digests match what was written.
    again = await call(return_order, EXAMPLES / "return-order.json", tmp_path / "again")
    assert again.resumed is True
    assert (tmp_path / "again" / "return-order.json").read_bytes() == (
        tmp_path / "return" / "return-order.json"
    ).read_bytes()


class EchoingDownload(httpx.AsyncBaseTransport):
    """The sandbox, but the address service's batch download carries the account's password in a street, as
    a careless service echoing what it was sent would."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.echoed = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if "/downloadfile/" not in request.url.path or response.status_code != 200:
            return response
        content = await response.aread()
        echoed = _echo_in_zip(content) if content.startswith(b"PK") else _echo(content)
        self.echoed += echoed != content
        headers = [(k, v) for k, v in response.headers.items() if k != "content-length"]
        return httpx.Response(200, headers=headers, content=echoed, request=request)


def _echo(content: bytes) -> bytes:
    return content.replace(b"Lindenstrasse", f"Lindenstrasse {SANDBOX_ADDRESS_PASSWORD}".encode(), 1)


def _echo_in_zip(content: bytes) -> bytes:
    """The ZIP with the password echoed in each member."""
    echoed = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(content)) as source,
        zipfile.ZipFile(echoed, "w", zipfile.ZIP_DEFLATED) as copy,
    ):
        for member in source.infolist():
            copy.writestr(member.filename, _echo(source.read(member)))
    return echoed.getvalue()


async def test_a_batch_download_echoing_the_password_is_written_without_it(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transport = EchoingDownload(sandbox.transport)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: transport)
    out = tmp_path / "out"
    fast = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}
    await call(address_batch, input_path=EXAMPLES / "address-batch.csv", output_dir=out, **fast)
    assert transport.echoed == 1, "the download carried no password"
    scan = SecretScan([Secret("password", SANDBOX_ADDRESS_PASSWORD)])
    files = [path for folder in (out, flow_env) for path in folder.rglob("*") if path.is_file()]
    assert any(path.parent.name == "download" for path in files)
    for path in files:
        scan.scan_file(str(path.parent), path)
    assert not scan.findings, "\n".join(map(str, scan.findings))
    unpacked = (out / "download" / "result.txt").read_bytes()
    assert b"Lindenstrasse [redacted]" in unpacked
    archive = next(path for path in files if path.parent.name == "download" and path.suffix == ".zip")
    with zipfile.ZipFile(archive) as kept:  # the download itself, rewritten without the password
        assert kept.read("result.txt") == unpacked
