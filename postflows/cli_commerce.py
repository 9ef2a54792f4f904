"""CLI commands of the commerce API outside the flows: signing a user in and out, and quick look-ups
(``postflows commerce zips|streets|houses|assist|addresses|address|main-address|userinfo``); the look-ups
that run as flows (``product``, ``same-day``) are in :mod:`postflows.cli_lookups`.

They are single quick calls, so they run without a flow; failures print one line and exit 1 (2 for bad
usage or configuration), as every postflows command does. No token is ever printed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any

import typer

from postflows import cli_lookups
from postflows.cli_common import run_work, say
from postflows.commerce_lookup import DEBOUNCE_S, assist, render_models, render_strings

if TYPE_CHECKING:
    # The clients, settings and the console are imported where a command runs: ``postflows --help`` and
    # every other command stay free of them.
    from connectors.commerce import Address, CommerceClient, ZipEntry

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")]

commerce_app = typer.Typer(
    name="commerce",
    help="Quick look-ups of the commerce API: zips, streets, house numbers, the signed-in user's addresses.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _announce() -> None:
    from runtime.endpoints import describe_commerce
    from runtime.settings import get_settings

    say(f"commerce API: {describe_commerce(get_settings())}")


def commerce_login_command(
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="Open the sign-in address in a web browser")
    ] = False,
    redirect: Annotated[
        str | None,
        typer.Option(
            "--redirect",
            help="For a redirect URI this machine cannot listen on: the address your browser was sent to",
        ),
    ] = None,
    login_hint: Annotated[str | None, typer.Option("--login-hint", help="Account to suggest")] = None,
    scope: Annotated[
        list[str] | None, typer.Option("--scope", help="Scope to ask for (repeatable; default from settings)")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for the redirect")] = 300.0,
) -> None:
    """Sign a user in (OpenID Connect authorization code flow) and keep the refresh token for later runs."""
    from postflows.commerce_login import (
        SignInDialogue,
        SignInRequest,
        sandbox_browser,
        sign_in,
        system_browser,
    )
    from runtime.settings import get_settings
    from runtime.wiring import commerce_token_store, embedded, oidc_client

    settings = get_settings()
    _announce()
    scopes = tuple(scope or settings.commerce.login_scopes.split())

    async def work() -> None:
        store = commerce_token_store(settings)
        opener = None
        if settings.commerce.is_sandbox:
            opener = sandbox_browser(embedded.sandbox_transport(settings))  # the one the clients use
        elif browser:
            opener = system_browser

        async def pasted() -> str:
            if redirect is None:
                raise ValueError("--redirect is needed")
            return redirect

        async with oidc_client(settings) as oidc:
            result = await sign_in(
                oidc,
                store,
                SignInRequest(settings.commerce.redirect_uri, scopes, login_hint=login_hint, timeout=timeout),
                SignInDialogue(say, browser=opener, pasted_redirect=pasted if redirect is not None else None),
            )
        who = result.username or result.subject or "the user"
        say(f"signed in as {who}; scopes {' '.join(result.scopes)}; the sign-in is kept in {result.where}")

    run_work(work, progress=False)


def commerce_logout_command() -> None:
    """Forget the signed-in user's refresh token."""
    from runtime.settings import get_settings
    from runtime.wiring import commerce_token_store

    store = commerce_token_store(get_settings())
    say(f"signed out: removed {store.where}" if store.clear() else "no sign-in was kept")


def _client(*, personal: bool = False) -> CommerceClient:
    from connectors.errors import LoginRequired
    from runtime.settings import get_settings
    from runtime.wiring import commerce_client, oidc_client, user_session

    settings = get_settings()
    if not personal:
        return commerce_client(settings)
    session = user_session(settings, oidc_client(settings))
    if session is None:
        raise LoginRequired("no user is signed in: run `postflows commerce-login` first")
    return commerce_client(settings, user=session)


@commerce_app.command("zips")
def zips_command(
    term: Annotated[str, typer.Argument(help="Start of a zip or a city name")],
    postbox: Annotated[
        bool, typer.Option("--postbox", help="P.O. box zips instead of domicile zips")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Zips and cities matching a partial zip or city."""

    async def work() -> list[ZipEntry]:
        async with _client() as client:
            return await client.zips(term, type_="POSTBOX" if postbox else None)

    entries = run_work(work, progress=False)
    render_models(
        "zips",
        entries,
        [("zip", lambda e: e.zip), ("city", lambda e: e.city), ("city18", lambda e: e.city18)],
        as_json=as_json,
    )


@commerce_app.command("streets")
def streets_command(
    term: Annotated[str, typer.Argument(help="Start of a street name")],
    zip_code: Annotated[str | None, typer.Option("--zip", help="Only streets of this zip")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Street names matching a partial name."""

    async def work() -> list[str]:
        async with _client() as client:
            return await client.streets(term, zip_code=zip_code)

    render_strings("streets", run_work(work, progress=False), as_json=as_json)


@commerce_app.command("houses")
def houses_command(
    zip_code: Annotated[str, typer.Argument(help="Zip of the street")],
    street: Annotated[str, typer.Argument(help="Street name")],
    number: Annotated[str, typer.Argument(help="Start of a house number")] = "",
    as_json: JsonOpt = False,
) -> None:
    """House numbers of a street matching a partial number."""

    async def work() -> list[str]:
        async with _client() as client:
            return await client.houses(zip_code, street, number)

    render_strings("houses", run_work(work, progress=False), as_json=as_json)


@commerce_app.command("assist")
def assist_command(
    target: Annotated[str, typer.Argument(help="zips or streets")],
    zip_code: Annotated[str | None, typer.Option("--zip", help="Streets of this zip only")] = None,
    delay: Annotated[float, typer.Option("--delay", help="Seconds of stillness before a query")] = DEBOUNCE_S,
) -> None:
    """Auto-complete as you type: each line read is the text typed so far; a query goes out once the input
    has been still for --delay seconds, and only the answer to the latest input is shown."""
    if target not in ("zips", "streets"):
        raise typer.BadParameter("zips or streets", param_hint="TARGET")
    from postflows.console import output_console

    console = output_console()

    async def work() -> list[str]:
        async with _client() as client:

            async def query(text: str) -> list[str]:
                if target == "zips":
                    return [f"{entry.zip} {entry.city}" for entry in await client.zips(text)]
                return await client.streets(text, zip_code=zip_code)

            def show(text: str, values: list[str]) -> None:
                console.print(f"{text!r}: " + (", ".join(values[:10]) or "no results"), soft_wrap=True)

            return await assist(_stdin_lines(), query, show, delay=delay)

    sent = run_work(work, progress=False)
    say(f"{len(sent)} queries sent")


async def _stdin_lines() -> AsyncIterator[str]:
    while True:
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            return
        yield line


_ADDRESS_COLUMNS: list[tuple[str, Any]] = [
    ("id", lambda a: a.id),
    ("type", lambda a: a.type),
    (
        "name",
        lambda a: (
            " ".join(filter(None, [a.addressee.first_name, a.addressee.last_name])) if a.addressee else None
        ),
    ),
    ("street", lambda a: _house(a)),
    ("zip", lambda a: _zip(a)[0]),
    ("city", lambda a: _zip(a)[1]),
    ("post box", lambda a: a.logistic_location.post_box_number if a.logistic_location else None),
]


def _house(address: Address) -> str | None:
    for location in (address.geographic_location, address.logistic_location):
        if location is not None and location.house is not None and location.house.street:
            return " ".join(filter(None, [location.house.street, location.house.house_number]))
    return None


def _zip(address: Address) -> tuple[str | None, str | None]:
    for location in (address.geographic_location, address.logistic_location):
        if location is not None and location.zip is not None and location.zip.zip:
            return location.zip.zip, location.zip.city
    return None, None


@commerce_app.command("addresses")
def addresses_command(as_json: JsonOpt = False) -> None:
    """The signed-in user's addresses (needs `postflows commerce-login`)."""

    async def work() -> list[Address]:
        async with _client(personal=True) as client:
            return await client.addresses()

    render_models("addresses", run_work(work, progress=False), _ADDRESS_COLUMNS, as_json=as_json)


@commerce_app.command("main-address")
def main_address_command(as_json: JsonOpt = False) -> None:
    """The signed-in user's MAIN address."""

    async def work() -> Address:
        async with _client(personal=True) as client:
            return await client.main_address()

    render_models("main address", [run_work(work, progress=False)], _ADDRESS_COLUMNS, as_json=as_json)


@commerce_app.command("address")
def address_command(
    address_id: Annotated[str, typer.Argument(help="The address id (a UUID)")], as_json: JsonOpt = False
) -> None:
    """One of the signed-in user's addresses."""

    async def work() -> Address:
        async with _client(personal=True) as client:
            return await client.address(address_id)

    render_models("address", [run_work(work, progress=False)], _ADDRESS_COLUMNS, as_json=as_json)


@commerce_app.command("userinfo")
def userinfo_command(as_json: JsonOpt = False) -> None:
    """The signed-in user's profile claims (OpenID Connect userinfo)."""
    from connectors.errors import LoginRequired
    from connectors.oauth import OAuth2ClientCredentialsAuth
    from postflows.console import output_console
    from runtime.settings import get_settings
    from runtime.wiring import oidc_client, user_session

    settings = get_settings()

    async def work() -> Any:
        async with oidc_client(settings) as oidc:
            session = user_session(settings, oidc)
            if session is None:
                raise LoginRequired("no user is signed in: run `postflows commerce-login` first")
            return await oidc.userinfo(OAuth2ClientCredentialsAuth(session, ["openid"]))

    info = run_work(work, progress=False)
    console = output_console()
    if as_json:
        console.print_json(info.model_dump_json(exclude_none=True))
        return
    for name, value in info.model_dump(exclude_none=True).items():
        console.print(f"{name}: {value}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the commerce commands to the ``postflows`` command."""
    app.command("commerce-login")(commerce_login_command)
    app.command("commerce-logout")(commerce_logout_command)
    app.add_typer(commerce_app, name="commerce")


cli_lookups.register(commerce_app)  # once, whichever apps the group is added to
