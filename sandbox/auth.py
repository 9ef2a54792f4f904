"""Sandbox OAuth token endpoint (being built)."""

from fastapi import FastAPI

from sandbox.config import SandboxConfig


def create_app(config: SandboxConfig) -> FastAPI:
    return FastAPI()
