"""Every flow's options as pydantic models, declared once: the Prefect form, the ``postflows`` command's
options, the pre-checks and the work's identity are read from them (see :mod:`flows.requests.base`).

A flow takes one parameter per part: its request (what to do) and the shared parts (how long to wait, where
the results go). Importing this package imports pydantic and nothing of the flows' engine.
"""

from flows.requests.address_service import (
    BATCH_POLLING,
    CLEANUP_AGE_HOURS,
    AddressBatchRequest,
    AddressQueryRequest,
    CleanupRequest,
)
from flows.requests.base import WORK, Cli, RequestPart, argument, flag, option, parameters_of, split_values
from flows.requests.commerce import (
    AddressValidationRequest,
    DeliverabilityRequest,
    PickupRegistrationRequest,
    ReferenceDataOutput,
)
from flows.requests.commerce_lookups import LogisticProductRequest, LookupOutput, SameDayAcceptanceRequest
from flows.requests.common import (
    AddressTable,
    BillingOptions,
    BillingReference,
    KeyedWork,
    OptionalOutputOptions,
    OutputOptions,
    OwnOutputOptions,
    PollingOptions,
    Resubmission,
)
from flows.requests.newspaper import (
    AddressPurchaseRequest,
    MasterDataRequest,
    NewspaperOrderRequest,
    ReportsRequest,
    StatisticsRequest,
    StructureFilesRequest,
)
from flows.requests.parcels import AddressLabelsRequest, PickupPointsRequest, ReturnOrderRequest
from flows.requests.reports import ADDRESS_FLOWS, HistoryReportRequest

__all__ = [
    "ADDRESS_FLOWS",
    "BATCH_POLLING",
    "CLEANUP_AGE_HOURS",
    "WORK",
    "AddressBatchRequest",
    "AddressPurchaseRequest",
    "AddressQueryRequest",
    "AddressTable",
    "AddressValidationRequest",
    "DeliverabilityRequest",
    "HistoryReportRequest",
    "BillingOptions",
    "BillingReference",
    "CleanupRequest",
    "Cli",
    "KeyedWork",
    "LogisticProductRequest",
    "LookupOutput",
    "MasterDataRequest",
    "NewspaperOrderRequest",
    "OutputOptions",
    "OptionalOutputOptions",
    "OwnOutputOptions",
    "PickupRegistrationRequest",
    "PickupPointsRequest",
    "AddressLabelsRequest",
    "ReturnOrderRequest",
    "ReferenceDataOutput",
    "PollingOptions",
    "ReportsRequest",
    "RequestPart",
    "SameDayAcceptanceRequest",
    "StatisticsRequest",
    "StructureFilesRequest",
    "Resubmission",
    "argument",
    "flag",
    "option",
    "parameters_of",
    "split_values",
]
