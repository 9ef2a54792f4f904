"""The composition root: an ``http://`` service address off loopback is refused before any client is built,
and the limits on answers reach every client from the settings."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from connectors.limits import (
    DOCUMENT_MAX_BYTES,
    RESPONSE_MAX_BYTES,
    ResponseLimits,
    document_answer_limit,
)
from fileio.limits import DOWNLOAD_MAX_BYTES
from runtime import wiring
from runtime.settings import Settings
from runtime.wiring import address_service as address_wiring
from runtime.wiring import commerce as commerce_wiring
from runtime.wiring import newspaper as newspaper_wiring
from sandbox.inprocess import address_service_url

ADDRESS = {"address_service_user": "tech-user", "address_service_password": SecretStr("pw")}
NEWSPAPER = {"newspaper_client_id": "client", "newspaper_client_secret": SecretStr("secret")}
COMMERCE = {"commerce_client_id": "client", "commerce_client_secret": SecretStr("secret")}


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("values", "build", "variable"),
    [
        (
            {"address_service_url": "http://addresses.example.test/REST/v1", **ADDRESS},
            wiring.address_service_client,
            "POSTFLOWS_ADDRESS_SERVICE_URL",
        ),
        (
            {
                "newspaper_url": "https://newspaper.example.test",
                "newspaper_token_url": "http://auth.example.test/OAuth/token",
                **NEWSPAPER,
            },
            wiring.newspaper_client,
            "POSTFLOWS_NEWSPAPER_TOKEN_URL",
        ),
        (
            {
                "commerce_url": "https://commerce.example.test",
                "commerce_auth_url": "https://auth.example.test",
                "commerce_userinfo_url": "http://10.1.2.3/userinfo",
                **COMMERCE,
            },
            wiring.commerce_client,
            "POSTFLOWS_COMMERCE_USERINFO_URL",
        ),
        (
            {
                "commerce_url": "http://commerce.example.test",
                "commerce_auth_url": "https://a.test",
                **COMMERCE,
            },
            wiring.oidc_client,
            "POSTFLOWS_COMMERCE_URL",
        ),
    ],
    ids=["address service", "newspaper token", "commerce userinfo", "oidc"],
)
def test_an_http_address_off_loopback_is_refused_before_a_client_is_built(
    values: dict[str, object], build: object, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    modules = {
        "AddressServiceClient": address_wiring,
        "NewspaperClient": newspaper_wiring,
        "CommerceClient": commerce_wiring,
        "OidcClient": commerce_wiring,
    }
    for name, module in modules.items():
        monkeypatch.setattr(module, name, lambda *args, _name=name, **kwargs: built.append(_name))
    with pytest.raises(wiring.ConfigurationError) as refused:
        build(settings(**values))  # type: ignore[operator]
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{variable} is http:// to ")
    assert "POSTFLOWS_ALLOW_HTTP=true" in message and "https://" in message
    assert built == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/REST/v1",
        "http://127.8.9.10/REST/v1",
        "http://[::1]:8080/REST/v1",
        "http://localhost/x",
    ],
)
def test_http_on_loopback_is_accepted(url: str) -> None:
    client = wiring.address_service_client(settings(address_service_url=url, **ADDRESS))
    assert client.base_url == url.rstrip("/")


def test_http_off_loopback_is_accepted_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_ALLOW_HTTP", "true")
    client = wiring.newspaper_client(
        Settings(
            _env_file=None,  # type: ignore[call-arg]
            newspaper_url="http://newspaper.example.test",
            newspaper_token_url="http://auth.example.test/OAuth/token",
            **NEWSPAPER,  # type: ignore[arg-type]
        )
    )
    assert client.base_url == "http://newspaper.example.test"


async def test_the_embedded_sandbox_keeps_working() -> None:
    async with wiring.address_service_client(settings()) as client:
        await client.ping()
    assert client.base_url.startswith("http://")


def test_the_limits_reach_every_client_from_the_settings() -> None:
    configured = settings(response_max_bytes=1000, http_deadline_s=7.5, download_max_bytes=3000)
    expected = ResponseLimits(max_bytes=1000, deadline_s=7.5)
    newspaper = wiring.newspaper_client(configured)
    assert newspaper.limits == expected
    assert newspaper._document_traits.body_limit == document_answer_limit(3000)
    assert wiring.address_service_client(configured).limits == expected
    assert wiring.commerce_client(configured).limits == expected
    assert wiring.oidc_client(configured).limits == expected


def test_the_settings_defaults_are_the_connectors_defaults() -> None:
    defaults = settings()
    assert defaults.response_max_bytes == RESPONSE_MAX_BYTES == 16 << 20
    assert defaults.http_deadline_s is None
    assert defaults.allow_http is False
    assert DOCUMENT_MAX_BYTES == DOWNLOAD_MAX_BYTES == defaults.download_max_bytes


@pytest.mark.parametrize("name", ["response_max_bytes", "http_deadline_s", "allow_http"])
def test_each_new_limit_says_in_one_line_what_a_refusal_says(name: str) -> None:
    field = Settings.model_fields[name]
    assert field.description
    assert isinstance(field.json_schema_extra, dict)
    limit = field.json_schema_extra["limit"]
    assert isinstance(limit, str) and limit and "\n" not in limit


def _answering(seen: list[str]) -> httpx.MockTransport:
    """Answers a ping and a building verification, keeping every address asked."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.host}{request.url.path}")
        if request.url.path.endswith("/ping"):
            return httpx.Response(200, json={"Status": 0})
        data = {"HouseNo": "12", "PSTAT": 1, "StreetName": "Lindenstrasse", "ZipCode": "6010"}
        return httpx.Response(
            200, json={"QueryBuildingVerification2Result": {"BuildingVerificationData": data, "Status": 0}}
        )

    return httpx.MockTransport(handle)


async def test_the_address_assistant_goes_to_its_own_address_and_the_batch_to_its() -> None:
    configured = settings(
        address_service_url="https://test.addresses.example/REST/v1",
        address_assistant_url="https://addresses.example/REST/v1",
        **ADDRESS,
    )
    seen: list[str] = []
    async with wiring.address_assistant_client(configured, transport=_answering(seen)) as assistant:
        await assistant.verify_building(
            street_name="Lindenstrasse", house_no="12", zip_code="6010", town_name="K"
        )
    async with wiring.address_service_client(configured, transport=_answering(seen)) as service:
        await service.ping()
    assert seen == ["addresses.example/REST/v1/buildingverification2", "test.addresses.example/REST/v1/ping"]


def test_with_a_batch_address_and_no_assistant_address_the_assistant_is_refused() -> None:
    """§4.4: the assistant has no test environment, so it never falls back to the batch address."""
    configured = settings(address_service_url="https://test.addresses.example/REST/v1", **ADDRESS)
    seen: list[str] = []
    with pytest.raises(wiring.ConfigurationError, match="POSTFLOWS_ADDRESS_ASSISTANT_URL must be set"):
        wiring.address_assistant_client(configured, transport=_answering(seen))
    assert seen == []


async def test_without_any_address_the_embedded_sandbox_serves_the_assistant_and_the_batch() -> None:
    unconfigured = settings()
    wiring.reset_sandbox()
    try:
        async with wiring.address_assistant_client(unconfigured) as assistant:
            building = await assistant.verify_building(
                street_name="Lindenstrasse", house_no="12", zip_code="6010", town_name="Kriens"
            )
            assert str(assistant.url("/ping")).startswith(address_service_url())
        async with wiring.address_service_client(unconfigured) as service:
            await service.ping()
            assert str(service.url("/ping")).startswith(address_service_url())
    finally:
        wiring.reset_sandbox()
    assert building.house_key == 100000006
