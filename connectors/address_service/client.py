"""Async client of the address web service (spec §4): batch files, individual queries, auto-complete and
building verification, with pre-emptive HTTP Basic on every request and every ``Status`` evaluated.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import SecretStr

from connectors.address_service.answers import (
    JsonAnswer,
    json_or_none,
    ping_check,
    reading,
    result_of,
    status_body,
    status_of,
)
from connectors.address_service.autocomplete import (
    AutocompleteQuery,
    AutocompleteVariant,
    build_autocomplete_request,
    classify,
)
from connectors.address_service.errors import (
    API,
    AddressServiceStatusError,
    status_error,
)
from connectors.address_service.models import (
    AUTOCOMPLETE2_FIELD_NAMES,
    INPUT_FILE_PLACEHOLDER,
    OUTPUT_FILE_PLACEHOLDER,
    AutocompleteEntry,
    BatchJob,
    BatchStatus,
    BuildingVerification,
    QueryResult,
)
from connectors.auth import basic_auth
from connectors.errors import ApiError, MalformedResponse
from connectors.http import ApiClient, ClientOptions, RequestTraits

_CHUNK = 1 << 16


class _FileChunks:
    """A re-iterable async byte stream over a file, so a retried upload re-reads it from the start."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with self.path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                yield chunk


_TRANSFER = RequestTraits(transfer=True)
_SUBMISSION = RequestTraits(idempotent=False)
_PACED = RequestTraits(paced=True)
_PACED_QUERY = RequestTraits(idempotent=True, paced=True)
_PACED_SUBMISSION = RequestTraits(idempotent=False, paced=True)


class AddressServiceClient(ApiClient):
    """Client of the address web service.

    Individual queries, the address assistant and building verification are sent ``paced`` (through the
    ``pacer`` of its options when one is given): the service counts them against its per-minute limit
    (Status 106).
    Individual queries are billed: like runbatch, they are never sent again after an uncertain failure.

    Args:
        base_url: the service's base address, ending in REST/v1.
        username: the technical user.
        password: its password; used only to build the Authorization header.
        options: how the service is reached (:class:`~connectors.http.ClientOptions`).
    """

    api_name = API

    def __init__(
        self, base_url: str, *, username: str, password: SecretStr, options: ClientOptions | None = None
    ) -> None:
        super().__init__(base_url, auth=basic_auth(username, password), options=options)

    def error_for_response(self, response: httpx.Response) -> ApiError:
        """An HTTP error whose JSON body carries a non-zero ``Status`` is that Status's typed error (§7 shows
        no HTTP status for failures: the guess ``address-service.failure-http-status``); any other is the
        HTTP status's."""
        if 400 <= response.status_code < 500 and "json" in response.headers.get("content-type", ""):
            try:
                status = status_of(json_or_none(response.content))
            except MalformedResponse:
                status = None
            if status:
                base = httpx.URL(self.base_url).path.rstrip("/")
                operation = response.request.url.path.removeprefix(base).strip("/").split("/")[0]
                return status_error(status, operation=operation)
        return super().error_for_response(response)

    async def _call(self, method: str, path: str, operation: str, **kwargs: Any) -> dict[str, Any]:
        answer = JsonAnswer(operation)
        await self.request(method, path, check=answer.check, **kwargs)
        return answer.payload

    # -- availability -----------------------------------------------------------------------------------

    async def ping(self) -> None:
        """GET /ping: returns when the service answers HTTP 200, whatever its body, unless the body is JSON
        with a Status other than 0 (raised as that Status's typed error)."""
        await self.request("GET", "/ping", check=ping_check)

    # -- batch ------------------------------------------------------------------------------------------

    async def upload_file(self, source: Path | bytes) -> str:
        """POST /uploadfile with the input file streamed from disk, with a download's deadline (a large file
        takes its time); returns its FileToken."""
        if isinstance(source, bytes):
            content: Any = source
            length = len(source)
        else:
            content = _FileChunks(source)
            length = source.stat().st_size
        payload = await self._call(
            "POST",
            "/uploadfile",
            "uploadfile",
            content=content,
            headers={"Content-Type": "application/octet-stream", "Content-Length": str(length)},
            traits=_TRANSFER,
        )
        with reading("uploadfile"):
            return str(result_of(payload, "UploadFileResult")["FileToken"])

    async def create_file(self) -> str:
        """GET /createfile: creates the output file; returns its FileToken.

        A GET that creates something: after a failure that may have come once the file was made (a read
        timeout, a 5xx, Status 201-203) it is not sent again, or the first file would be left without its
        token.
        """
        payload = await self._call("GET", "/createfile", "createfile", traits=_SUBMISSION)
        with reading("createfile"):
            return str(result_of(payload, "CreateFileResult")["FileToken"])

    async def run_batch(
        self,
        key: str,
        input_token: str,
        output_token: str,
        *,
        billing_reference: str | None = None,
        client_identifier: str | None = None,
        client_name: str | None = None,
        extra_items: Mapping[str, str] | None = None,
    ) -> BatchJob:
        """POST /runbatch, or /runbatchwithclient when a billing reference number is given.

        ``extra_items`` maps further replace items of the alignment (``{###STATISTICFILE_FR###}``) to the
        tokens of files made for them with /createfile.
        """
        items = {
            INPUT_FILE_PLACEHOLDER: input_token,
            OUTPUT_FILE_PLACEHOLDER: output_token,
            **(extra_items or {}),
        }
        body: dict[str, Any] = {
            "key": key,
            "replaceItems": [{"Search": search, "Replacement": token} for search, token in items.items()],
        }
        operation = _with_client(body, "runbatch", billing_reference, client_identifier, client_name)
        payload = await self._call("POST", f"/{operation}", operation, json=body)
        with reading(operation):
            return BatchJob.model_validate(result_of(payload, "RunBatchResult"))

    async def check_batch_status(self, batch_token: str) -> BatchStatus:
        """GET /checkbatchstatus/{token}."""
        payload = await self._call("GET", f"/checkbatchstatus/{batch_token}", "checkbatchstatus")
        with reading("checkbatchstatus"):
            return BatchStatus.model_validate(result_of(payload, "CheckBatchStatusResult")["BatchStatus"])

    @asynccontextmanager
    async def download(self, token: str) -> AsyncIterator[AsyncIterator[bytes]]:
        """GET /downloadfile/{token}: yields the output file as an async iterator of byte chunks.

        Nothing is written here; the caller decides where the bytes go and how many it accepts. Failures are
        retried until the status line is checked, never in the middle of the body: a failure there (a
        dropped connection, a stalled read, the download's deadline) is raised as a ``TransportFailure`` for
        the caller's step to retry. A JSON answer is the service's ``Status`` in place of the file and
        raises its typed error.

        Usage::

            async with client.download(token) as chunks:
                async for chunk in chunks:
                    ...
        """
        async with self.stream("GET", f"/downloadfile/{token}") as response:
            if "json" in response.headers.get("content-type", ""):
                status = status_of(json_or_none(await status_body(response)))
                raise status_error(status or 999, operation="downloadfile")
            yield response.aiter_bytes(_CHUNK)

    async def delete_file(self, token: str) -> None:
        """GET /deletefile/{token}: returns when the service answers Status 0, the one answer that says the
        file is deleted.

        Any other Status raises its typed error, 302 included: §7 names it DatabaseItemNotFound and means by
        it, as by 301, "error accessing the database", which says nothing certain about the file.
        """
        await self._call("GET", f"/deletefile/{token}", "deletefile")

    # -- individual query -------------------------------------------------------------------------------

    async def run_query(
        self,
        key: str,
        record_id: int,
        fields: Mapping[str, str | None],
        *,
        timeout_ms: int = 10000,
        billing_reference: str | None = None,
        client_identifier: str | None = None,
        client_name: str | None = None,
    ) -> QueryResult:
        """POST /runquery2 (or /runquery2withclient) for one address given as ``FieldName_in`` → value.

        A query is billed (its answer carries a ``SettlementId``; Status 105 speaks of "methods with
        automatic settlement", §4.2, §7), so it is a submission: it is sent again only after a failure that
        certainly means "not processed" (Status 106 and the rest of ``NOT_PROCESSED_STATUSES``, HTTP 429, a
        request that never left). After any other failure (a lost answer, a read timeout or the deadline,
        Status 201-203, a 5xx, an unreadable answer) the error is raised at once with ``outcome_unknown``.
        """
        data = [{"FieldName": name, "Value": value or ""} for name, value in fields.items()]
        body: dict[str, Any] = {"address": {"Id": record_id, "Data": data}, "key": key, "timeout": timeout_ms}
        operation = _with_client(body, "runquery2", billing_reference, client_identifier, client_name)
        payload = await self._call("POST", f"/{operation}", operation, json=body, traits=_PACED_SUBMISSION)
        with reading(operation):
            # runquery2withclient answers "same as /runquery2" (§4.2); a wrapper named after it is read too.
            result = result_of(payload, "RunQuery2Result", "RunQuery2WithClientResult")
            inner = result.get("Result") or {}
            values = {str(item["FieldName"]): item.get("Value") for item in inner.get("Data") or []}
            return QueryResult(id=inner.get("Id"), fields=values, settlement_id=result.get("SettlementId"))

    # -- address assistant ------------------------------------------------------------------------------

    async def autocomplete(
        self, query: AutocompleteQuery, *, version: Literal[2, 3, 4] = 4
    ) -> tuple[AutocompleteVariant, list[AutocompleteEntry]]:
        """POST /autocomplete{version}; returns the §4.3 variant used and the hits."""
        variant = classify(query)
        body = build_autocomplete_request(query, version)
        wrapper = {4: "QueryAutoComplete4Result", 3: "QueryAutoComplete3Result", 2: "QueryAutoCompleteResult"}
        payload = await self._call(
            "POST",
            f"/autocomplete{version}",
            f"autocomplete{version}",
            json=body,
            traits=_PACED_QUERY,
        )
        with reading(f"autocomplete{version}"):
            raw = result_of(payload, wrapper[version]).get("AutoCompleteResult") or []
            if version == 2:
                raw = [{AUTOCOMPLETE2_FIELD_NAMES.get(k, k): v for k, v in entry.items()} for entry in raw]
            return variant, [AutocompleteEntry.model_validate(entry) for entry in raw]

    async def verify_building(
        self,
        *,
        street_name: str,
        house_no: str,
        zip_code: str,
        town_name: str,
        house_no_addition: str = "",
    ) -> BuildingVerification:
        """GET /buildingverification2: whether a building exists, in official spelling when it does."""
        params = {
            "streetname": street_name,
            "houseno": house_no,
            "housenoaddition": house_no_addition,
            "zipcode": zip_code,
            "townName": town_name,
        }
        payload = await self._call(
            "GET", "/buildingverification2", "buildingverification2", params=params, traits=_PACED
        )
        with reading("buildingverification2"):
            # The current method's wrapper is not shown (§4.4): the obsolete one's name, or the plain one.
            result = result_of(payload, "QueryBuildingVerification2Result", "QueryBuildingVerificationResult")
            data = result.get("BuildingVerificationData") or {}
            return BuildingVerification.model_validate(data)


def _with_client(
    body: dict[str, Any],
    method: str,
    billing_reference: str | None,
    client_identifier: str | None,
    client_name: str | None,
) -> str:
    """Choose ``method`` or ``<method>withclient`` and add the client fields the latter takes to ``body``."""
    if not billing_reference:
        if client_identifier or client_name:
            raise ValueError("clientIdentifier and clientName need a billing reference number")
        return method
    body["billingReferenceNumber"] = billing_reference
    if client_identifier:
        body["clientIdentifier"] = client_identifier
    if client_name:
        body["clientName"] = client_name
    return f"{method}withclient"


__all__ = ["AddressServiceClient", "AddressServiceStatusError"]
