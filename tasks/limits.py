"""Limits on what the services send us: the size of a download or document and the compression ratio of a
ZIP; defaults of the settings that change them, whose names the errors quote.
"""

from __future__ import annotations

DOWNLOAD_MAX_BYTES = 1 << 30
"""Largest download, document or inflated ZIP content accepted, in bytes (1 GiB)."""

DOWNLOAD_MAX_BYTES_SETTING = "POSTFLOWS_DOWNLOAD_MAX_BYTES"

ZIP_MAX_RATIO = 100.0
"""Largest ratio of inflated to compressed size accepted from a ZIP, per member and for the whole archive."""

ZIP_MAX_RATIO_SETTING = "POSTFLOWS_ZIP_MAX_RATIO"
