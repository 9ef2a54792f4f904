"""Sandbox of the address_service API (being built)."""

from fastapi import FastAPI

from sandbox.config import SandboxConfig


def create_app(config: SandboxConfig) -> FastAPI:
    return FastAPI()
