from .autocomplete import (
    AutocompleteQuery,
    AutocompleteQueryError,
    AutocompleteVariant,
    ZipOrderMode,
    build_autocomplete_request,
)
from .client import AddressServiceClient
from .errors import (
    AddressServiceStatusError,
    AuthenticationStatusError,
    DatabaseStatusError,
    InternalStatusError,
    ParameterStatusError,
    SettlementStatusError,
    ThrottledStatusError,
    UnknownStatusError,
    status_error,
)
from .models import (
    AutocompleteEntry,
    BatchJob,
    BatchStatus,
    BuildingVerification,
    QueryResult,
    TokenStatus,
    parse_ms_date,
)

__all__ = [
    "AddressServiceClient",
    "AddressServiceStatusError",
    "AuthenticationStatusError",
    "AutocompleteEntry",
    "AutocompleteQuery",
    "AutocompleteQueryError",
    "AutocompleteVariant",
    "BatchJob",
    "BatchStatus",
    "BuildingVerification",
    "DatabaseStatusError",
    "InternalStatusError",
    "ParameterStatusError",
    "QueryResult",
    "SettlementStatusError",
    "ThrottledStatusError",
    "TokenStatus",
    "UnknownStatusError",
    "ZipOrderMode",
    "build_autocomplete_request",
    "status_error",
    "parse_ms_date",
]
