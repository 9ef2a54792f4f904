"""The run history's whole schema: every table, the reference data's of each API too, as the migrations
build it (a flow that only records its run loads :mod:`history.models` alone)."""

from __future__ import annotations

from sqlalchemy import MetaData

from history.models import Base
from history.reference import commerce_models, newspaper_models

METADATA: MetaData = Base.metadata
"""Every table of the run history; the reference data's are among them once their modules
(``REFERENCE_MODELS``) are imported, as they are here."""
REFERENCE_MODELS = (commerce_models, newspaper_models)
