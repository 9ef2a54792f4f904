"""The project's packages, as the Makefile's PACKAGES lists them: what the tests that walk the code read."""

from __future__ import annotations

PACKAGES = (
    "core",
    "connectors",
    "fileio",
    "tasks",
    "runtime",
    "flows",
    "deployments",
    "history",
    "sandbox",
    "postflows",
)
