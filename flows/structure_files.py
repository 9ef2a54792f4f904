"""Structure files: download fileCode 1 (AZ/GZA), 2 (AZA/AZB) or 9 (both), record a file as new only when
its content changed, and optionally register the e-mail address for notices of new versions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from prefect import flow, get_run_logger

from connectors.newspaper import StructureFileCode
from connectors.newspaper.errors import FieldProblem
from connectors.newspaper.validation import email_problem, ensure_valid
from flows.runs import recorded_run
from postflows.settings import get_settings
from postflows.wiring import newspaper_client
from tasks.newspaper.outputs import publish_summary, summary_markdown
from tasks.newspaper.structure_files import DOCUMENT_KIND, download_structure_files, register_notice_email
from tasks.newspaper.submissions import WarningLog
from tasks.reports import write_csv

FLOW_NAME = "structure-files"


@flow(name=FLOW_NAME, log_prints=False)
async def structure_files(
    file_code: int, output_dir: Path, notify_email: str | None = None
) -> dict[str, Any]:
    """Download the structure files of one file code.

    Args:
        file_code: 1 = AZ/GZA, 2 = AZA/AZB, 9 = both.
        output_dir: where the files, structure-files.csv and summary.md go.
        notify_email: register this address as recipient of notices about new structure file versions.

    Returns:
        The run summary: each file with its size, SHA-256 and whether it is new.
    """
    settings = get_settings()
    output_dir = Path(output_dir)
    code = StructureFileCode(int(file_code))
    if notify_email is not None and (problem := email_problem(notify_email)):
        ensure_valid("structure file e-mail", [FieldProblem("email", problem)])
    parameters = {"file_code": int(code), "output_dir": output_dir, "notify_email": notify_email}
    async with recorded_run(
        settings, flow=FLOW_NAME, idempotency_key=f"{FLOW_NAME}:{int(code)}", parameters=parameters
    ) as (recorder, summary):
        warnings = WarningLog(recorder)
        confirmation = None
        async with newspaper_client(settings, request_log=recorder.request_log) as client:
            files, file_warnings = await download_structure_files(
                client, code, output_dir, settings.effective_database_url
            )
            warnings.add("structure files", file_warnings)
            if notify_email is not None:
                confirmation, email_warnings = await register_notice_email(client, notify_email)
                warnings.add("notice e-mail", email_warnings)
                recorder.message("info", "notice-email", f"{notify_email} registered: {confirmation}")
        for file in files:
            if file.new:
                recorder.document(DOCUMENT_KIND, file.path)
            else:
                recorder.message("info", "unchanged", f"{file.name}: content unchanged ({file.sha256[:12]})")
        listing = pd.DataFrame(
            [{"file": f.name, "size": f.size, "sha256": f.sha256, "new": f.new} for f in files],
            columns=["file", "size", "sha256", "new"],
        )
        written = [write_csv(listing, output_dir / "structure-files.csv")]
        facts: dict[str, Any] = {"file code": f"{int(code)} ({code.name})"}
        facts.update({file.name: "new" if file.new else "unchanged" for file in files})
        if notify_email is not None:
            facts["notice e-mail"] = f"{notify_email}: {confirmation}"
        text = summary_markdown(f"Structure files, fileCode {int(code)}", facts, warnings.lines)
        written.append(
            await publish_summary(output_dir, text, key="structure-files", description="Structure files")
        )
        summary.update(
            file_code=int(code),
            files=[{"name": f.name, "path": str(f.path), "sha256": f.sha256, "new": f.new} for f in files],
            new_files=sum(f.new for f in files),
            notice_email=notify_email,
            confirmation=confirmation,
            warnings=warnings.lines,
        )
        get_run_logger().info("%d structure files, %d new", len(files), summary["new_files"])
        return dict(summary)
