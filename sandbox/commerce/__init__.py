"""Sandbox of the commerce API (address, delivery and pickup sub-APIs), mounted at ``/commerce``; the app
is built by :func:`sandbox.commerce.api.create_app`. This package module imports nothing, so the
authorization server can read the sandbox's users (:mod:`sandbox.commerce.users`) without a cycle.
"""
