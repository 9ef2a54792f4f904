from .address_service import (
    BATCH_POLLING,
    CLEANUP_AGE_HOURS,
    AddressBatchRequest,
    AddressQueryRequest,
    CleanupRequest,
)
from .base import WORK, Cli, RequestPart, argument, flag, option, parameters_of, split_values
from .commerce import (
    AddressValidationRequest,
    DeliverabilityRequest,
    PickupRegistrationRequest,
    ReferenceDataOutput,
)
from .commerce_lookups import LogisticProductRequest, LookupOutput, SameDayAcceptanceRequest
from .common import (
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
from .newspaper import MasterDataRequest, ReportsRequest, StatisticsRequest, StructureFilesRequest
from .newspaper_orders import AddressPurchaseRequest, NewspaperOrderRequest
from .parcels import AddressLabelsRequest, PickupPointsRequest, ReturnOrderRequest
from .reports import ADDRESS_FLOWS, HistoryReportRequest

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
