"""What an address batch request asks of the service (:class:`BatchWork`): the alignment profile and batch
key it resolves to with the settings, the identity a run starts under and the key of what it sends
(:func:`work_key`) and the dry run's plan.json."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.address_service.models import INPUT_FILE_PLACEHOLDER, OUTPUT_FILE_PLACEHOLDER
from core.json_text import json_text
from fileio.address_service.profiles import AlignmentProfile, load_profile, split_mapping
from fileio.address_service.wire import upload_columns
from fileio.files import write_text
from fileio.input_format import InputFormat
from flows.address_input import input_format
from flows.requests import AddressBatchRequest
from history.identity import Endpoint, derive_key
from runtime.settings import Settings
from tasks.address_service.steps import PreparedInput

FLOW_NAME = "address-batch"
PLAN_SPLIT_EXAMPLES = 10


@dataclass(frozen=True)
class BatchWork:
    """What a request asks of the service, with the settings' part (the batch key, the default profile)."""

    request: AddressBatchRequest
    alignment: AlignmentProfile | None
    batch_key: str
    input_format: InputFormat
    mapping: dict[str, str] | None
    profile_map: dict[str, str]

    @classmethod
    def of(cls, request: AddressBatchRequest, settings: Settings) -> BatchWork:
        alignment = alignment_profile(
            request.profile or settings.address_service.profile,
            request.upload_delimiter,
            request.upload_encoding,
        )
        mapping, profile_map = split_mapping(request.column_mapping, alignment)
        return cls(
            request=request,
            alignment=alignment,
            batch_key=(alignment.key if alignment is not None else None)
            or settings.address_service.batch_key,
            input_format=input_format(request),
            mapping=mapping,
            profile_map=profile_map,
        )

    @property
    def billing(self) -> tuple[str | None, str | None, str | None]:
        return (self.request.billing_reference, self.request.client_identifier, self.request.client_name)

    @property
    def identity(self) -> dict[str, Any]:
        """What the run starts under, before the upload is written: the request's work with the batch key,
        the profile, the input format and the upload's layout as sent."""
        request, alignment = self.request, self.alignment
        return {
            **request.identity(),
            "key": self.batch_key,
            "profile": None if alignment is None else f"{alignment.name} sha256:{alignment.fingerprint()}",
            "input_format": self.input_format,
            "upload_delimiter": request.upload_delimiter
            if alignment is not None
            else request.upload_delimiter or "\t",
            "upload_encoding": request.upload_encoding
            if alignment is not None
            else request.upload_encoding or "cp1252",
        }

    def key_of(self, endpoint: Endpoint, upload: Path) -> str:
        """The key of what is sent, once the upload is written (see :func:`work_key`)."""
        outputs = self.alignment.outputs if self.alignment is not None else {}
        return work_key(endpoint, upload, batch_key=self.batch_key, billing=self.billing, outputs=outputs)


def work_key(
    endpoint: Endpoint,
    upload_path: Path,
    *,
    batch_key: str,
    billing: tuple[str | None, str | None, str | None],
    outputs: Mapping[str, str],
) -> str:
    """The identity of a batch: the SHA-256 of the upload's bytes, with the service and user, the
    alignment key, the billing fields and the alignment's extra outputs (everything runbatch is sent)."""
    billing_reference, client_identifier, client_name = billing
    sent = {
        "key": batch_key,
        "billing_reference": billing_reference,
        "client_identifier": client_identifier,
        "client_name": client_name,
        "replace_items": sorted(outputs.values()),
    }
    return derive_key(FLOW_NAME, endpoint=endpoint, files=(upload_path,), parameters=sent)


def alignment_profile(
    name: str | None, delimiter: str | None, encoding: str | None
) -> AlignmentProfile | None:
    """The profile named, with the upload delimiter and encoding given on the command line as overrides."""
    if not name:
        return None
    return load_profile(name).with_upload(delimiter=delimiter, encoding=encoding)


def batch_plan(
    prepared: PreparedInput,
    profile: AlignmentProfile | None,
    batch_key: str,
    key: str,
    output_dir: Path,
    *,
    problem: str | None = None,
) -> Path:
    """plan.json of a dry run: what would be sent, under which key and profile, and what stays here."""
    records = prepared.records
    sent = list(profile.upload.columns) if profile is not None else upload_columns(records)
    plan = {
        "batch_key": batch_key,
        "idempotency_key": key,
        "profile": None if profile is None else {"name": profile.name, "sha256": profile.fingerprint()},
        "upload_file": str(prepared.upload_path),
        "replace_items": [
            INPUT_FILE_PLACEHOLDER,
            OUTPUT_FILE_PLACEHOLDER,
            *(profile.outputs.values() if profile is not None else ()),
        ],
        "rows": {"input": records.input_rows, "sent": prepared.accepted, "rejected": prepared.rejected_rows},
        "record_id": None
        if profile is None
        else {"sent_in": profile.upload.record_id, "returned_in": profile.result_record_id},
        "house_numbers": {
            "split": prepared.house_numbers_split,
            "file": None if prepared.house_numbers_path is None else str(prepared.house_numbers_path),
            "first": records.house_numbers.head(PLAN_SPLIT_EXAMPLES).to_dict(orient="records"),
        },
        "columns_sent": sent,
        "columns_kept_here": [column for column in records.passthrough_columns if column not in sent],
        "problem": problem,
    }
    return write_text(output_dir / "plan.json", json_text(plan, indent=2) + "\n")
