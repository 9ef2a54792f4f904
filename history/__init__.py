"""Run history in SQL: every run, step, remote job and downloaded document, so a re-run resumes.

SQLite by default, PostgreSQL in production; the schema is migrated with Alembic on first use::

    factory = session_factory(settings.effective_database_url)
    with factory.begin() as session:
        run = start_run(session, flow="purchase-newspapers", idempotency_key=key, parameters=params)
"""

from history.changelog import SyncCounts, master_data_changes
from history.commerce import (
    current_additional_services,
    current_delivery_instructions,
    current_holidays,
    sync_additional_services,
    sync_delivery_instructions,
    sync_holidays,
)
from history.commerce_models import AdditionalServiceRow, DeliveryHolidayRow, DeliveryInstructionRow
from history.db import create_engine_for, dispose_engines, migrate, session_factory
from history.leases import (
    Claimant,
    LeaseHolder,
    holds_lease,
    lease_holder,
    release_lease,
    renew_lease,
    try_acquire_lease,
)
from history.masterdata_models import (
    BlackListEntryRow,
    DistributionDetailRow,
    DistributionListRow,
    MasterDataChange,
    NewspaperSummaryRow,
)
from history.models import (
    Base,
    Document,
    JobEvent,
    JobState,
    KeyLease,
    MessageLevel,
    RemoteJob,
    Run,
    RunMessage,
    RunState,
    Step,
    utcnow,
)
from history.newspaper import (
    current_black_list,
    current_distribution_details,
    sync_black_list,
    sync_distribution_list,
    synced_newspaper_numbers,
    upsert_newspaper_summary,
)
from history.remote_jobs import (
    batch_file_tokens,
    batches_using_file,
    job_with_remote_id,
    undeleted_files,
    unfinished_jobs,
)
from history.scrub import MASK, json_safe
from history.store import (
    abandon_stale_runs,
    file_digest,
    find_document,
    find_remote_job,
    finish_run,
    get_run,
    jobs_for_key,
    latest_run,
    list_runs,
    record_document,
    record_message,
    record_step,
    save_remote_job,
    start_run,
    update_remote_job,
)

__all__ = [
    "Claimant",
    "JobState",
    "KeyLease",
    "LeaseHolder",
    "holds_lease",
    "lease_holder",
    "release_lease",
    "renew_lease",
    "try_acquire_lease",
    "undeleted_files",
    "job_with_remote_id",
    "batch_file_tokens",
    "batches_using_file",
    "unfinished_jobs",
    "abandon_stale_runs",
    "AdditionalServiceRow",
    "DeliveryHolidayRow",
    "DeliveryInstructionRow",
    "current_additional_services",
    "current_delivery_instructions",
    "current_holidays",
    "sync_additional_services",
    "sync_delivery_instructions",
    "sync_holidays",
    "BlackListEntryRow",
    "DistributionDetailRow",
    "DistributionListRow",
    "MasterDataChange",
    "NewspaperSummaryRow",
    "SyncCounts",
    "current_black_list",
    "current_distribution_details",
    "master_data_changes",
    "sync_black_list",
    "sync_distribution_list",
    "synced_newspaper_numbers",
    "upsert_newspaper_summary",
    "MASK",
    "Base",
    "Document",
    "JobEvent",
    "MessageLevel",
    "RemoteJob",
    "Run",
    "RunMessage",
    "RunState",
    "Step",
    "create_engine_for",
    "dispose_engines",
    "file_digest",
    "find_document",
    "find_remote_job",
    "finish_run",
    "get_run",
    "jobs_for_key",
    "json_safe",
    "latest_run",
    "list_runs",
    "migrate",
    "record_document",
    "record_message",
    "record_step",
    "save_remote_job",
    "session_factory",
    "start_run",
    "update_remote_job",
    "utcnow",
]
