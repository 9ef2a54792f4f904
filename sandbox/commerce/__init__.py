"""Sandbox of the commerce API (address, delivery and pickup sub-APIs), mounted at ``/commerce``."""
