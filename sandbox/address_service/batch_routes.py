"""Availability and batch endpoints (§4.1): ping, upload/create/delete files, run a batch, poll it and
download its output.

``/ping`` answers HTTP 200 with ``{"Status": 0}``, or with an empty body (JSON or text content type) as
``SandboxConfig.address_ping_answer`` says: the spec shows only the HTTP 200.

``/downloadfile/{token}`` accepts the output file token (or the batch token) and streams the output once the
job is Finished (TokenStatus 4); before that, for failed jobs and for unknown or deleted tokens it answers
HTTP 200 ``{"Status": 302}`` as JSON, so a client tells the two apart by the content type. The token of an
extra output file streams that file the same way.

A key with an agreed alignment (``SandboxConfig.alignments``) needs, besides the input and output file, a
file made by ``/createfile`` for every replace item its ``outputs`` declare: one missing (or a token given
twice) answers Status 801, one that is not a created file 302, and no job starts. An upload without the
agreed layout is not refused by ``/runbatch`` — the spec has no Status for a file's content, which the job
reads — but its job ends Failed (TokenStatus 5) with a Message naming the first difference. A configured
key without an agreed alignment reads an upload whose header is exactly that of a held alignment
(``SandboxConfig.held_alignments``: the client's built-in profiles) by it, any other by its column names.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from sandbox.address_service.aligned_input import AlignmentMismatch
from sandbox.address_service.alignment import BatchOutput, align_batch
from sandbox.address_service.alignments import SandboxAlignment
from sandbox.address_service.batchfile import OTHER_OUTPUT_FORMAT, OURS_OUTPUT_FORMAT, BatchFileError
from sandbox.address_service.extra_outputs import output_filename
from sandbox.address_service.jobs import (
    OUTCOME_OF_FAULT,
    BatchJob,
    StoredFile,
    TokenStatus,
    date_literal,
    progress_of,
)
from sandbox.address_service.matching import Matcher
from sandbox.address_service.service import AddressService, Status, answer
from sandbox.faults import active_fault
from sandbox.guesses import is_other, play

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
INPUT_PLACEHOLDER = "{###INPUTFILE###}"
OUTPUT_PLACEHOLDER = "{###OUTPUTFILE###}"


def batch_router(service: AddressService) -> APIRouter:
    """The §4.1 routes bound to ``service``."""
    router = APIRouter()

    @router.get("/ping")
    def ping(request: Request) -> Response:
        return service.refuse(request, None) or _ping_answer(service.config.address_ping_answer)

    @router.post("/uploadfile")
    async def upload_file(request: Request) -> Response:
        wrapper = "UploadFileResult"
        if refusal := service.refuse(request, wrapper, limit="upload"):
            return refusal
        content = await request.body()
        if not content or len(content) > MAX_UPLOAD_BYTES:
            return answer(wrapper, Status.INVALID_PARAMETER)
        stored = StoredFile(service.store.new_token(), "upload", service.now(), content)
        service.store.add_file(stored)
        return answer(wrapper, FileToken=stored.token)

    @router.get("/createfile")
    def create_file(request: Request) -> Response:
        wrapper = "CreateFileResult"
        if refusal := service.refuse(request, wrapper):
            return refusal
        stored = StoredFile(service.store.new_token(), "output", service.now())
        service.store.add_file(stored)
        return answer(wrapper, FileToken=stored.token)

    @router.post("/runbatch")
    async def run_batch(request: Request) -> Response:
        return await _run_batch(service, request, with_client=False)

    @router.post("/runbatchwithclient")
    async def run_batch_with_client(request: Request) -> Response:
        return await _run_batch(service, request, with_client=True)

    @router.get("/checkbatchstatus/{token}")
    def check_batch_status(token: str, request: Request) -> Response:
        return _check_batch_status(service, token, request)

    @router.get("/downloadfile/{token}")
    def download_file(token: str, request: Request) -> Response:
        return _download_file(service, token, request)

    @router.get("/deletefile/{token}")
    def delete_file(token: str, request: Request) -> Response:
        return _delete_file(service, token, request)

    return router


def _check_batch_status(service: AddressService, token: str, request: Request) -> Response:
    wrapper = "CheckBatchStatusResult"
    if refusal := service.refuse(request, wrapper):
        return refusal
    job = service.store.job(token)
    if job is None:
        return answer(wrapper, Status.ITEM_NOT_FOUND)
    state = progress_of(job, service.now(), waiting=not is_other(request))
    batch_status = {
        "LastUpdateDateTime": date_literal(state.last_update),
        "Message": state.message,
        "Progress": state.progress,
        "RemainingTimeSeconds": state.remaining_seconds,
        "StartDateTime": date_literal(state.start),
        "TokenStatus": int(state.token_status),
    }
    return answer(wrapper, BatchStatus=batch_status)


def _download_file(service: AddressService, token: str, request: Request) -> Response:
    if refusal := service.refuse(request, None):
        return refusal
    if (extra := service.store.extra_output(token)) is not None:
        return _download_extra(service, *extra)
    job = service.store.job_of_output(token)
    # address-service.download-token, the other way: only the batch token downloads the output.
    if is_other(request) and job is not None and token != job.token:
        return answer(None, Status.ITEM_NOT_FOUND)
    if job is None or progress_of(job, service.now()).token_status != TokenStatus.FINISHED:
        return answer(None, Status.ITEM_NOT_FOUND)
    filename = "result.zip" if job.output_is_zip else "result.txt"
    return Response(
        job.output,
        media_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def _delete_file(service: AddressService, token: str, request: Request) -> Response:
    if refusal := service.refuse(request, None):
        return refusal
    # address-service.deletefile-302, the other way: the first ask fails as a database error would.
    if is_other(request) and service.first_deletion_asked(token):
        return answer(None, Status.ITEM_NOT_FOUND)
    return answer(None, Status.OK if service.store.delete(token) else Status.ITEM_NOT_FOUND)


def _ping_answer(body: str) -> Response:
    """A ping's HTTP 200: ``{"Status": 0}``, or an empty body with a JSON (``empty-json``) or a text content
    type."""
    if body == "status":
        return answer(None)
    return Response(b"", media_type="application/json" if body == "empty-json" else "text/plain")


def _download_extra(service: AddressService, job: BatchJob, item: str, content: bytes) -> Response:
    if progress_of(job, service.now()).token_status != TokenStatus.FINISHED:
        return answer(None, Status.ITEM_NOT_FOUND)
    filename = output_filename(item, service.config.alignments.get(job.key))
    return Response(
        content,
        media_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


async def _json_object(request: Request) -> dict[str, Any] | None:
    try:
        body = await request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _replacements(items: Any) -> dict[str, str] | None:
    if not isinstance(items, list):
        return None
    found: dict[str, str] = {}
    for item in items:
        if not isinstance(item, dict):
            return None
        search, replacement = item.get("Search"), item.get("Replacement")
        if not isinstance(search, str) or not isinstance(replacement, str):
            return None
        found[search.strip()] = replacement.strip()
    return found


async def _run_batch(service: AddressService, request: Request, *, with_client: bool) -> JSONResponse:
    wrapper = "RunBatchResult"
    if refusal := service.refuse(request, wrapper):
        return refusal
    body = await _json_object(request)
    replacements = _replacements(body.get("replaceItems")) if body is not None else None
    if body is None or replacements is None or not isinstance(body.get("key"), str):
        return answer(wrapper, Status.INVALID_PARAMETER)
    key: str = body["key"]
    matcher = service.matcher_for(key)
    if matcher is None:
        return answer(wrapper, Status.KEY_UNKNOWN)
    if with_client and (billing := service.billing_status(body.get("billingReferenceNumber"))):
        return answer(wrapper, billing)
    input_token, output_token = replacements.get(INPUT_PLACEHOLDER), replacements.get(OUTPUT_PLACEHOLDER)
    if input_token is None or output_token is None:
        return answer(wrapper, Status.INVALID_PARAMETER)
    upload, output = service.store.file(input_token), service.store.file(output_token)
    if upload is None or upload.kind != "upload" or output is None or output.kind != "output":
        return answer(wrapper, Status.ITEM_NOT_FOUND)
    alignment = service.alignment_for(key, upload.content)
    extra_outputs: dict[str, str] = {}
    if alignment is not None:
        found = _extra_output_tokens(service, alignment, replacements, exclude=(input_token, output_token))
        if isinstance(found, int):
            return answer(wrapper, found)
        extra_outputs = found

    duration, outcome = _job_timing(service, request)
    job = BatchJob(
        token=service.store.new_token(),
        key=key,
        input_token=input_token,
        output_token=output_token,
        started_at=service.now(),
        duration=duration,
        outcome=outcome,
        settlement_id=service.store.next_settlement(),
        billing_reference=str(body.get("billingReferenceNumber") or ""),
        client_identifier=str(body.get("clientIdentifier") or ""),
        client_name=str(body.get("clientName") or ""),
        extra_outputs=extra_outputs,
    )
    delivered = _output_of(service, request, job, upload.content, matcher, alignment)
    job.output, job.output_is_zip = delivered.content, delivered.is_zip
    extras = {extra_outputs[item]: content for item, content in delivered.extras.items()}
    service.store.add_job(job, extras)
    return answer(wrapper, BatchToken=job.token, SettlementId=job.settlement_id)


def _job_timing(service: AddressService, request: Request) -> tuple[float, TokenStatus]:
    """How long a new job runs and how it ends: the configured seconds and Finished, unless a fault of the
    request says otherwise."""
    duration, outcome = float(service.config.job_seconds), TokenStatus.FINISHED
    fault = active_fault(request)
    if fault is not None and fault.kind == "job_seconds":
        duration = float(fault.value)
    if fault is not None and fault.kind == "job_outcome":
        outcome = OUTCOME_OF_FAULT.get(str(fault.value).lower(), TokenStatus.UNKNOWN)
    return duration, outcome


def _output_of(
    service: AddressService,
    request: Request,
    job: BatchJob,
    content: bytes,
    matcher: Matcher,
    alignment: SandboxAlignment | None,
) -> BatchOutput:
    """The output files of ``job`` for the uploaded ``content``; an upload that cannot be read by its
    alignment fails the job, which then has no output."""
    try:
        layout = OTHER_OUTPUT_FORMAT if is_other(request) else OURS_OUTPUT_FORMAT
        if is_other(request):
            play(request, "address-service.output-file-layout", "address-service.correction-marks")
        return align_batch(
            content,
            matcher,
            report_moves=service.is_maintenance(job.key),
            key=job.key,
            alignment=alignment,
            output=layout,
            standardized_as_given=is_other(request),
        )
    except AlignmentMismatch as exc:
        job.outcome, job.failure = TokenStatus.FAILED, f"Input file refused: {exc}"
    except (BatchFileError, UnicodeDecodeError) as exc:
        job.outcome, job.failure = TokenStatus.FAILED, f"Input file unreadable: {exc}"
    return BatchOutput(b"")


def _extra_output_tokens(
    service: AddressService,
    alignment: SandboxAlignment,
    replacements: dict[str, str],
    exclude: tuple[str, ...],
) -> dict[str, str] | int:
    """Replace item -> created file token for every output ``alignment`` declares, or the Status refusing
    the call: 801 when an item is missing or a token is given twice, 302 when a token is no created file."""
    tokens: dict[str, str] = {}
    for item in alignment.outputs.values():
        token = replacements.get(item)
        if token is None or token in exclude or token in tokens.values():
            return Status.INVALID_PARAMETER
        stored = service.store.file(token)
        if stored is None or stored.kind != "output":
            return Status.ITEM_NOT_FOUND
        tokens[item] = token
    return tokens
