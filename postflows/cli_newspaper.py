"""CLI sub-commands of the newspaper API flows (registered on :data:`postflows.cli.app`)."""

from __future__ import annotations
