"""The commerce connector against the in-process sandbox: every endpoint and grant, the sign-in checks
(state, nonce, expiry, signature, issuer, audience), refresh with rotation, and the scope rules."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from connectors.commerce import (
    AddressNotFound,
    CommerceClient,
    CommercePaths,
    CommerceRejected,
    DeliveryAddress,
    Notification,
    PickupAddress,
    PickupUserRequest,
    SameDayRequest,
    UserDetails,
    ValidationRequest,
    Zip,
)
from connectors.commerce.models import DeliveryHouse
from connectors.commerce.oidc import OidcClient, UserSession, UserTokens
from connectors.errors import (
    AuthFailed,
    IdTokenInvalid,
    LoginFailed,
    LoginRequired,
    StateMismatch,
)
from connectors.http import ClientOptions
from connectors.oauth import ClientCredentials
from connectors.paths import CommerceScopes
from sandbox.commerce.paths import CommercePaths as SandboxPaths
from sandbox.config import SandboxConfig
from sandbox.inprocess import SandboxTransport, auth_url, commerce_url

CLIENT_ID = "sandbox-commerce-client"
SECRET = SecretStr("sandbox-commerce-secret")
REDIRECT = "http://127.0.0.1:49152/callback"
LOGIN_SCOPES = ("openid", "profile", "email", "DCAPI_ADDRESS_READ")
HANS = "c0a80101-0000-4000-8000-000000000001"
ANNAS_DOMICILE = "9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a"
HANS_DOMICILE = "5b7c2f1e-3d4a-4c8b-9e6f-0a1b2c3d4e5f"


def oidc_for(transport: httpx.AsyncBaseTransport) -> OidcClient:
    return OidcClient(
        auth_url(), client_id=CLIENT_ID, client_secret=SECRET, options=ClientOptions(transport=transport)
    )


async def sign_in(
    oidc: OidcClient, transport: httpx.AsyncBaseTransport, *, login_hint: str | None = None
) -> UserTokens:
    """The authorization code flow with the sandbox as the browser (it consents automatically)."""
    request = oidc.begin(REDIRECT, LOGIN_SCOPES, login_hint=login_hint)
    async with httpx.AsyncClient(transport=transport) as browser:
        answer = await browser.get(request.url)
    assert answer.status_code == 302
    return await oidc.finish(request, answer.headers["location"])


@asynccontextmanager
async def commerce(
    config: SandboxConfig | None = None,
    *,
    signed_in: bool = False,
    paths: CommercePaths | None = None,
    scopes: CommerceScopes | None = None,
) -> AsyncIterator[tuple[CommerceClient, SandboxTransport]]:
    transport = SandboxTransport(config or SandboxConfig())
    user = None
    if signed_in:
        oidc = oidc_for(transport)
        tokens = await sign_in(oidc, transport)
        assert tokens.refresh_token is not None
        user = UserSession(oidc, tokens.refresh_token, tokens=tokens)
    credentials = ClientCredentials(f"{auth_url()}/OAuth/token", CLIENT_ID, SECRET, api="commerce")
    client = CommerceClient(
        commerce_url(),
        credentials=credentials,
        user=user,
        paths=paths,
        scopes=scopes,
        options=ClientOptions(transport=transport),
    )
    async with client:
        yield client, transport


# --- sign-in


async def test_sign_in_checks_the_id_token_and_yields_a_refresh_token() -> None:
    transport = SandboxTransport(SandboxConfig())
    async with oidc_for(transport) as oidc:
        tokens = await sign_in(oidc, transport)
    assert tokens.id_claims["sub"] == HANS
    assert tokens.id_claims["aud"] in (CLIENT_ID, [CLIENT_ID])
    assert tokens.id_claims["preferred_username"] == "hans.muster"
    assert tokens.refresh_token is not None
    assert {"openid", "DCAPI_ADDRESS_READ"} <= tokens.scopes


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("nonce", "nonce"),
        ("expired", "Expired"),
        ("signature", "Signature"),
        ("issuer", "iss"),
        ("audience", "aud"),
    ],
)
async def test_a_bad_id_token_is_refused(fault: str, reason: str) -> None:
    config = SandboxConfig(commerce_id_token_fault=fault)
    transport = SandboxTransport(config)
    async with oidc_for(transport) as oidc:
        with pytest.raises(IdTokenInvalid) as refused:
            await sign_in(oidc, transport)
    assert reason.lower() in str(refused.value).lower()


async def test_a_redirect_with_another_state_is_refused_before_the_code_is_used() -> None:
    config = SandboxConfig(commerce_id_token_fault="state")
    transport = SandboxTransport(config)
    async with oidc_for(transport) as oidc:
        with pytest.raises(StateMismatch):
            await sign_in(oidc, transport)
    counts = {(c.api, c.endpoint): c.count for c in transport.app.state.requests.counts()}
    assert ("auth", "OAuth/token") not in counts


async def test_a_code_is_single_use() -> None:
    transport = SandboxTransport(SandboxConfig())
    async with oidc_for(transport) as oidc:
        request = oidc.begin(REDIRECT, LOGIN_SCOPES)
        async with httpx.AsyncClient(transport=transport) as browser:
            location = (await browser.get(request.url)).headers["location"]
        await oidc.finish(request, location)
        with pytest.raises(AuthFailed, match="invalid_grant"):
            await oidc.finish(request, location)


async def test_refresh_rotates_the_refresh_token_and_hands_the_new_one_over() -> None:
    transport = SandboxTransport(SandboxConfig())
    kept: list[SecretStr] = []
    async with oidc_for(transport) as oidc:
        tokens = await sign_in(oidc, transport)
        assert tokens.refresh_token is not None
        session = UserSession(oidc, tokens.refresh_token, on_refresh_token=kept.append)
        credentials = ClientCredentials(f"{auth_url()}/OAuth/token", CLIENT_ID, SECRET)
        async with CommerceClient(
            commerce_url(), credentials=credentials, user=session, options=ClientOptions(transport=transport)
        ) as client:
            assert (await client.main_address()).type == "MAIN"
        assert len(kept) == 1
        assert kept[0].get_secret_value() != tokens.refresh_token.get_secret_value()
        # The old one was rotated away: the server refuses it now.
        with pytest.raises(AuthFailed, match="invalid_grant"):
            await oidc.refresh(tokens.refresh_token)
        renewed = await oidc.refresh(kept[0])
    assert renewed.id_claims["sub"] == HANS  # a refreshed ID token is checked too (without a nonce)


async def test_a_revoked_sign_in_asks_the_user_to_sign_in_again() -> None:
    transport = SandboxTransport(SandboxConfig())
    async with oidc_for(transport) as oidc:
        tokens = await sign_in(oidc, transport)
        assert tokens.refresh_token is not None
        async with httpx.AsyncClient(transport=transport) as admin:
            await admin.post(f"{auth_url()}/_sandbox/revoke-refresh-tokens")
        session = UserSession(oidc, tokens.refresh_token)
        credentials = ClientCredentials(f"{auth_url()}/OAuth/token", CLIENT_ID, SECRET)
        async with CommerceClient(
            commerce_url(), credentials=credentials, user=session, options=ClientOptions(transport=transport)
        ) as client:
            with pytest.raises(LoginFailed, match="commerce-login"):
                await client.addresses()


async def test_userinfo_returns_the_profile_claims() -> None:
    transport = SandboxTransport(SandboxConfig())
    async with oidc_for(transport) as oidc:
        tokens = await sign_in(oidc, transport)
        assert tokens.refresh_token is not None
        from connectors.oauth import OAuth2ClientCredentialsAuth

        info = await oidc.userinfo(
            OAuth2ClientCredentialsAuth(UserSession(oidc, tokens.refresh_token), ["openid"])
        )
    assert info.sub == HANS
    assert info.email_verified is True
    assert info.given_name == "Hans"


# --- personal addresses


async def test_personal_addresses_of_the_signed_in_user_and_someone_elses_id_is_not_found() -> None:
    async with commerce(signed_in=True) as (client, _):
        addresses = await client.addresses()
        main = await client.main_address()
        domicile = await client.address(HANS_DOMICILE)
        with pytest.raises(AddressNotFound, match=ANNAS_DOMICILE):
            await client.address(ANNAS_DOMICILE)
        with pytest.raises(CommerceRejected):
            await client.address("not-a-uuid")
    assert {str(a.type.canonical) for a in addresses if a.type} >= {
        "MAIN",
        "DOMICILE",
        "PICKUP_POINT",
        "LOCKER",
    }
    assert main.id is None and main.type == "MAIN"
    assert domicile.id == HANS_DOMICILE


async def test_the_real_type_names_are_read_as_the_specs() -> None:
    async with commerce(SandboxConfig(commerce_type_spelling="real"), signed_in=True) as (client, _):
        types = {str(a.type): str(a.type.canonical) for a in await client.addresses() if a.type}
    assert types["PICK_POST"] == "PICKUP_POINT"
    assert types["MY_POST_24"] == "LOCKER"


async def test_personal_data_without_a_user_is_refused_before_any_request() -> None:
    async with commerce() as (client, transport):
        with pytest.raises(LoginRequired):
            await client.addresses()
    assert transport.app.state.requests.counts() == []


# --- validation and auto-completion


@pytest.mark.parametrize("guesses", ["ours", "other"])
async def test_validation_certifies_a_known_building_and_refuses_an_address_without_zip_and_city(
    guesses: str,
) -> None:
    """Under the other answers (connectors.guesses) the quality comes in lower case, ``expires`` in the
    extended ISO form and the refusal as RFC 7807 problem details: each is still read."""
    async with commerce(SandboxConfig(guesses=guesses), scopes=_scopes(guesses)) as (client, _):  # type: ignore[arg-type]
        result = await client.validate_address(
            ValidationRequest.of(
                {
                    "firstName": "Hans",
                    "lastName": "Muster",
                    "street": "bahnhofstr.",
                    "houseNumber": "1",
                    "zip": "8001",
                    "city": "Zürich",
                }
            )
        )
        with pytest.raises(CommerceRejected) as refused:
            await client.validate_address(
                ValidationRequest.of({"street": "Bahnhofstrasse", "houseNumber": "1"})
            )
    assert str(result.quality).upper() == "CERTIFIED"
    assert result.expires is not None and result.expires.tzinfo is not None
    assert result.address is not None and result.address.geographic_location is not None
    house = result.address.geographic_location.house
    assert house is not None and house.street == "Bahnhofstrasse" and house.house_key
    assert refused.value.status_code == 400 and refused.value.meaning
    assert "zip" in refused.value.detail.lower() or "city" in refused.value.detail.lower()


def _scopes(guesses: str) -> CommerceScopes:
    """The scopes a contract answering the guess ``commerce.scopes`` the other way is configured with."""
    if guesses == "ours":
        return CommerceScopes()
    return CommerceScopes(validation="DCAPI_ADDRESS_VALIDATE", autocomplete="DCAPI_ADDRESS_AUTOCOMPLETE")


@pytest.mark.parametrize("guesses", ["ours", "other"])
async def test_auto_completion_and_no_results_as_an_empty_list(guesses: str) -> None:
    async with commerce(SandboxConfig(guesses=guesses), scopes=_scopes(guesses)) as (client, _):  # type: ignore[arg-type]
        zips = await client.zips("800")
        streets = await client.streets("Bahnhof", zip_code="8001")
        houses = await client.houses("8001", "Bahnhofstrasse", "1")
        nothing = await client.zips("Xyzzyville")
        no_streets = await client.streets("Qqqq", zip_code="8001")
    assert zips and all(entry.zip.startswith("800") for entry in zips)
    assert zips[0].city39 is not None  # kept although the spec does not name it
    assert "Bahnhofstrasse" in streets
    assert "1" in houses
    assert nothing == [] and no_streets == []


# --- delivery


ZURICH = DeliveryAddress.of(zip_code="8001", city="Zürich", street="Bahnhofstrasse", house_number="1")


async def test_deliverabilities_by_query_and_by_body() -> None:
    monday = dt.date(2026, 11, 23)
    async with commerce() as (client, _):
        fortnight = await client.deliverabilities(ZURICH, start=monday)
        week = await client.deliverabilities(ZURICH, start=monday, day_count=7)
        chosen = await client.deliverabilities(ZURICH, delivery_dates=[monday, monday + dt.timedelta(days=6)])
        posted = await client.deliverabilities_on(ZURICH, [monday, monday + dt.timedelta(days=6)])
    assert len(fortnight.days) == 14 and len(week.days) == 7
    assert [day.delivery_date for day in chosen.days] == [monday, monday + dt.timedelta(days=6)]
    sunday = chosen.days[1]
    assert sunday.activity == "NO_SERVICE" and not sunday.deliverable
    assert chosen.days[0].deliverable and chosen.days[0].product_codes
    assert [d.model_dump() for d in posted.days] == [d.model_dump() for d in chosen.days]


async def test_delivery_options_products_and_same_day() -> None:
    async with commerce() as (client, _):
        product = await client.logistic_product("PRI")
        services = await client.additional_services()
        instructions = await client.delivery_instructions()
        holidays = await client.holidays()
        same_day = await client.same_day_acceptance_points(
            SameDayRequest(address=ZURICH, delivery_date=dt.date.today() + dt.timedelta(days=1))
        )
    assert product.product_code == "PRI"
    assert services and all(service.name.best() for service in services)
    assert instructions and holidays
    assert any(holiday.date.month == 8 and holiday.date.day == 1 for holiday in holidays)
    assert same_day.results and all(result.product_codes for result in same_day.results)


# --- pickup


def pickup_user(first_name: str = "Hans") -> PickupUserRequest:
    return PickupUserRequest(
        user_details=UserDetails(gender="MALE", first_name=first_name, last_name="Muster", language="DE"),
        address=PickupAddress(
            house=DeliveryHouse(street="Bahnhofstrasse", house_number="1"),
            zip=Zip(zip="8001", city="Zürich", country_code="CH"),
        ),
        notification=Notification(notify_mode="EMAIL", email="hans.muster@example.ch"),
    )


async def test_pickup_registration_returns_the_existing_users_id_and_points_nearby() -> None:
    async with commerce() as (client, _):
        first = await client.register_pickup_user(pickup_user())
        again = await client.register_pickup_user(pickup_user())
        other = await client.register_pickup_user(pickup_user("Fritz"))
        points = await client.pickup_points(pickup_user())
    assert first.id == again.id != other.id
    assert first.verified == "NONE"
    assert points.points and all(point.calendar for point in points.points)
    assert any(day.closed for point in points.points for day in point.calendar.values())


async def test_a_service_that_serves_pickup_elsewhere_is_a_setting(tmp_path: Path) -> None:
    config = SandboxConfig(commerce_paths=SandboxPaths(pickup_prefix="/pickpost/v1"))
    async with commerce(config, paths=CommercePaths(pickup="/pickpost/v1")) as (client, transport):
        user = await client.register_pickup_user(pickup_user())
        points = await client.pickup_points(pickup_user())
    endpoints = {c.endpoint for c in transport.app.state.requests.counts() if c.api == "commerce"}
    assert user.id and points.points
    assert endpoints == {"pickpost/v1/users", "pickpost/v1/points"}


async def test_labels_and_return_orders_take_and_give_json() -> None:
    async with commerce() as (client, _):
        label = await client.create_address_label({"item": {"productCode": "PRI"}})
        order = await client.create_return_order({"pickupDate": "2026-11-24"})
    assert label["id"] and order["id"]


async def test_a_client_credentials_token_never_reaches_personal_data() -> None:
    transport = SandboxTransport(SandboxConfig())
    credentials = ClientCredentials(f"{auth_url()}/OAuth/token", CLIENT_ID, SECRET)
    # A client that sends its client-credentials token where a user's token is due gets 403.
    async with CommerceClient(
        commerce_url(), credentials=credentials, user=credentials, options=ClientOptions(transport=transport)
    ) as client:
        with pytest.raises(AuthFailed) as refused:
            await client.addresses()
    assert refused.value.status_code == 403


async def test_a_scope_the_contract_does_not_give_an_operation_is_refused_naming_it() -> None:
    """commerce.scopes, the other way, with our default scopes: 403, and the error names the scope asked."""
    async with commerce(SandboxConfig(guesses="other")) as (client, _):
        with pytest.raises(AuthFailed, match="DCAPI_ADDRESS_READ") as refused:
            await client.zips("8001")
    assert refused.value.status_code == 403
