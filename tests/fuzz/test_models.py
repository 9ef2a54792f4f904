"""Fuzzing the pydantic models of the three APIs, the newspaper error envelope and the clients' reading of
answers: whatever a service answers (any JSON, any bytes), a model is made or a ``ValidationError`` names the
field; a model made dumps to JSON and reads back as itself; an error envelope is read into messages or into
nothing, and a response with errors becomes a ``NewspaperRejected`` that says what the service said; an
answer of any size, nesting and status ends in a value or a typed error (an oversized or too deeply nested
success answer in its own), never in a ``RecursionError`` or a body read past the limit.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from types import ModuleType
from typing import Any, get_args
from urllib.parse import parse_qs

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, SecretStr, ValidationError

import connectors.address_service.models as address_models
import connectors.commerce.models as commerce_models
import connectors.commerce.oidc as oidc
import connectors.newspaper.documents as newspaper_documents
import connectors.newspaper.models as newspaper_models
from connectors.address_service import AddressServiceClient
from connectors.commerce import CommerceClient
from connectors.errors import ApiError, JsonTooDeep, ResponseTooLarge
from connectors.http import ClientOptions
from connectors.jsontext import json_nesting_exceeds
from connectors.limits import JSON_MAX_DEPTH, ResponseLimits
from connectors.newspaper import NewspaperClient
from connectors.newspaper.codes import MESSAGE_CODES
from connectors.newspaper.errors import (
    NewspaperRejected,
    check_response,
    error_for_response,
    messages_in_body,
)
from connectors.oauth import ClientCredentials
from connectors.retry import RetryPolicy
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import randoms

MODEL_CASES = 200
ENVELOPE_CASES = 2_000
ANSWER_CASES = 600


def _models(module: ModuleType) -> list[type[BaseModel]]:
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, BaseModel)
        and value.__module__ == module.__name__
        and not value.__name__.startswith("_")
    ]


MODELS = sorted(
    {
        *_models(address_models),
        *_models(commerce_models),
        *_models(newspaper_models),
        newspaper_documents.Document,
        oidc.Userinfo,
        oidc.UserinfoAddress,
    },
    key=lambda model: f"{model.__module__}.{model.__name__}",
)

# Values a service might put anywhere: the JSON kinds, and the ones that break naive parsing.
_ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 2**31, 2**63, 10**30, 0.5, -0.0, 1e308, math.inf, -math.inf, math.nan,
    "", " ", "0", "1", "1.5", "abc", "2030-01-31", "31.01.2030", "2030-01-31T10:00:00+01:00",
    "20300131T100000+0100", "/Date(1700000000000+0100)/", "/Date(-1)/", "/Date(99999999999999999)/",
    "10:00", "25:61", "CONTROL", "LOADED", "READY", "PICK_POST", "\x00", "=1+1", "9" * 400, "null", [], {},
)  # fmt: skip


def _leaf(rnd: random.Random) -> Any:
    if rnd.random() < 0.8:
        return rnd.choice(_ODD_VALUES)
    return "".join(chr(rnd.randrange(0x20, 0x3000)) for _ in range(rnd.randrange(8)))


def _json(rnd: random.Random, depth: int = 0) -> Any:
    """Any JSON value, nested a few levels at most."""
    roll = rnd.random()
    if depth >= 3 or roll < 0.6:
        return _leaf(rnd)
    if roll < 0.8:
        return [_json(rnd, depth + 1) for _ in range(rnd.randrange(4))]
    return {
        str(_leaf(rnd)) if rnd.random() < 0.3 else "x": _json(rnd, depth + 1) for _ in range(rnd.randrange(4))
    }


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's annotation holds (``Zip | None``, ``list[DeliveryDay]``, ``dict[date, Day]``)."""
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in get_args(annotation) for model in _nested_models(argument)]


def shaped(rnd: random.Random, model: type[BaseModel], depth: int = 0) -> dict[str, Any]:
    """A body of the model's shape: some of its fields, by the spec's or the Python name, each holding a
    body of its own model's shape, a list of them, or any JSON."""
    body: dict[str, Any] = {}
    fields = list(model.model_fields.items())
    for name, field in rnd.sample(fields, rnd.randrange(len(fields) + 1)) if fields else []:
        key = field.alias if field.alias and rnd.random() < 0.7 else name
        nested = _nested_models(field.annotation)
        if nested and depth < 3 and rnd.random() < 0.7:
            inner = shaped(rnd, rnd.choice(nested), depth + 1)
            body[key] = [inner] if rnd.random() < 0.3 else inner
        else:
            body[key] = _json(rnd, depth + 1)
    if rnd.random() < 0.2:
        body[str(_leaf(rnd))] = _json(rnd)  # a field the model does not know
    return body


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_a_model_is_made_or_the_field_is_named(model: type[BaseModel]) -> None:
    cases = CaseCount(f"models: {model.__module__.removeprefix('connectors.')}.{model.__name__}")

    @fuzz_settings(MODEL_CASES)
    @given(rnd=randoms, raw=st.one_of(st.binary(max_size=40), st.text(max_size=40)))
    def check(rnd: random.Random, raw: bytes | str) -> None:
        cases.add()
        body = shaped(rnd, model) if rnd.random() < 0.8 else _json(rnd)
        made = _validate(model, lambda: model.model_validate(body))
        _validate(model, lambda: model.model_validate_json(raw))
        text = json.dumps(body)  # Python writes NaN and Infinity as the service's JSON might
        _validate(model, lambda: model.model_validate_json(text))
        if made is not None:
            dumped = made.model_dump(mode="json", by_alias=True)
            again = model.model_validate(dumped).model_dump(mode="json", by_alias=True)
            assert json.dumps(again, sort_keys=True) == json.dumps(dumped, sort_keys=True)

    check()
    cases.require(MODEL_CASES)


def _validate(model: type[BaseModel], call: Any) -> BaseModel | None:
    """The model made, or None after a ``ValidationError`` that names each field it complains about."""
    try:
        made = call()
    except ValidationError as error:
        for problem in error.errors():
            assert problem["msg"].strip()
            assert all(isinstance(part, str | int) for part in problem["loc"])
        return None
    assert isinstance(made, model)
    return made


_CODED_TEXTS = tuple(f"{code} {text}" for code, text in MESSAGE_CODES.items())


def _message(rnd: random.Random) -> Any:
    """One element of an error array: a ``{error, resource}`` object with any of the plausible keys, a
    plain string, or anything at all."""
    roll = rnd.random()
    if roll < 0.2:
        return rnd.choice((*_CODED_TEXTS[:5], _leaf(rnd)))
    if roll < 0.3:
        return _json(rnd)
    keys = ("error", "message", "text", "code", "resource", "type", "severity", "warning")
    item: dict[str, Any] = {key: _json(rnd, 2) for key in rnd.sample(keys, rnd.randrange(len(keys)))}
    if "error" in item and rnd.random() < 0.5:
        item["error"] = rnd.choice(_CODED_TEXTS)
    if "code" in item and rnd.random() < 0.5:
        item["code"] = rnd.choice((1, 51, "0051", "200", 10**6, -3))
    return item


def _envelope(rnd: random.Random) -> Any:
    """A response body: the error and warning arrays under any of the names the client reads, a bare
    array of messages, one message, or any JSON."""
    roll = rnd.random()
    if roll < 0.15:
        return _json(rnd)
    if roll < 0.3:
        return [_message(rnd) for _ in range(rnd.randrange(4))]
    if roll < 0.4:
        return _message(rnd)
    keys = ("errors", "error", "errorMessages", "warnings", "warning", "messages", "id", "orderId")
    body: dict[str, Any] = {}
    for key in rnd.sample(keys, rnd.randrange(len(keys))):
        body[key] = [_message(rnd) for _ in range(rnd.randrange(4))] if rnd.random() < 0.6 else _message(rnd)
    return body


def test_the_newspaper_error_envelope_is_read_or_ignored() -> None:
    cases = CaseCount("newspaper error envelope: bodies and responses")

    @fuzz_settings(ENVELOPE_CASES)
    @given(
        rnd=randoms,
        status=st.sampled_from((200, 201, 400, 401, 403, 404, 409, 422, 429, 500, 502, 503)),
        raw=st.one_of(st.none(), st.none(), st.binary(max_size=40)),
    )
    def check(rnd: random.Random, status: int, raw: bytes | None) -> None:
        body = _envelope(rnd)
        cases.add()
        found = messages_in_body(body)
        for message in (*found.errors, *found.warnings):
            assert isinstance(message.message, str) and (message.message or message.code)
            assert message.code is None or (message.code.isdigit() and len(message.code) >= 4)
        content = raw if raw is not None else json.dumps(body).encode()
        if rnd.random() < 0.1:  # an envelope nested deeper than the parser may recurse: read as no messages
            content = _nested(content, rnd.choice((JSON_MAX_DEPTH + 1, 5_000, 100_000)))
        response = httpx.Response(status, content=content, request=httpx.Request("GET", "https://x/orders/1"))
        try:
            check_response(response)
        except NewspaperRejected as rejected:
            assert rejected.errors and str(rejected.errors[0].message) in str(rejected)
        error = error_for_response(response)
        assert isinstance(error, ApiError) and str(error).strip()

    check()
    cases.require(ENVELOPE_CASES)


def _nested(content: bytes, depth: int) -> bytes:
    return b"[" * depth + content + b"]" * depth


# -- answers through the clients ---------------------------------------------------------------------------

ANSWER_LIMIT = 1 << 16
TOKEN_URL = "https://auth.example.test/OAuth/token"
Call = Callable[[httpx.AsyncBaseTransport], Awaitable[Any]]


def _token_or(answer: httpx.Response) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) != TOKEN_URL:
            return answer
        scope = parse_qs(request.content.decode())["scope"][0]
        return httpx.Response(
            200, json={"access_token": f"t:{scope}", "token_type": "Bearer", "expires_in": 60}
        )

    return handler


async def _address(transport: httpx.AsyncBaseTransport) -> Any:
    async with AddressServiceClient(
        "https://aws.example.test/REST/v1",
        username="u",
        password=SecretStr("p"),
        options=ClientOptions(
            transport=transport,
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(max_bytes=ANSWER_LIMIT),
        ),
    ) as client:
        return await client.check_batch_status("job")


async def _newspaper(transport: httpx.AsyncBaseTransport) -> Any:
    async with NewspaperClient(
        "https://newspaper.example.test",
        credentials=ClientCredentials(TOKEN_URL, "c", SecretStr("s"), api="newspaper"),
        options=ClientOptions(
            transport=transport,
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(max_bytes=ANSWER_LIMIT),
        ),
    ) as client:
        return await client.get_order_status(7)


async def _commerce(transport: httpx.AsyncBaseTransport) -> Any:
    async with CommerceClient(
        "https://commerce.example.test",
        credentials=ClientCredentials(TOKEN_URL, "c", SecretStr("s"), api="commerce"),
        options=ClientOptions(
            transport=transport,
            retry=RetryPolicy(max_attempts=1),
            limits=ResponseLimits(max_bytes=ANSWER_LIMIT),
        ),
    ) as client:
        return await client.holidays()


CALLS: dict[str, tuple[Call, type[BaseModel]]] = {
    "address-service": (_address, address_models.BatchStatus),
    "newspaper": (_newspaper, newspaper_models.OrderStatus),
    "commerce": (_commerce, commerce_models.Holiday),
}


def _answer_body(rnd: random.Random, model: type[BaseModel]) -> bytes:
    """An answer: of the model's shape or any JSON, sometimes wrapped deeper than the limit, padded past the
    size limit, or bytes that are no JSON."""
    roll = rnd.random()
    if roll < 0.1:
        return bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(200)))
    content = json.dumps(shaped(rnd, model) if roll < 0.6 else _json(rnd)).encode()
    if rnd.random() < 0.25:
        content = _nested(content, rnd.choice((JSON_MAX_DEPTH, JSON_MAX_DEPTH + 1, 3_000, 20_000)))
    if rnd.random() < 0.2:
        content = b" " * rnd.choice((ANSWER_LIMIT - len(content), ANSWER_LIMIT, 3 * ANSWER_LIMIT)) + content
    return content


def _chunks(content: bytes, rnd: random.Random) -> Callable[[], AsyncIterator[bytes]]:
    sizes = [rnd.choice((1, 7, 4096, 1 << 16, 1 << 20)) for _ in range(8)]

    async def produce() -> AsyncIterator[bytes]:
        start = 0
        for size in sizes * (len(content) // min(sizes) + 1):
            if start >= len(content):
                return
            yield content[start : start + size]
            start += size

    return produce


@pytest.mark.parametrize("api", sorted(CALLS))
def test_an_answer_of_any_size_and_depth_ends_in_a_value_or_a_typed_error(api: str) -> None:
    cases = CaseCount(f"answers through the client: {api}")
    call, model = CALLS[api]
    refused: Counter[str] = Counter()

    @fuzz_settings(ANSWER_CASES, every_case=True)
    @given(rnd=randoms, status=st.sampled_from((200, 200, 200, 400, 404, 429, 500)))
    def check(rnd: random.Random, status: int) -> None:
        cases.add()
        content = _answer_body(rnd, model)
        headers = {"content-type": "application/json"}
        if rnd.random() < 0.5:
            headers["content-length"] = str(len(content))
        answer = httpx.Response(status, headers=headers, content=_chunks(content, rnd)())
        try:
            asyncio.run(call(httpx.MockTransport(_token_or(answer))))
        except ApiError as error:
            assert str(error).strip()
            if status >= 400:  # an error answer is mapped by its status, whatever its body
                assert not isinstance(error, ResponseTooLarge | JsonTooDeep), error
            elif len(content) > ANSWER_LIMIT:
                assert isinstance(error, ResponseTooLarge), error
            elif json_nesting_exceeds(content):
                assert isinstance(error, JsonTooDeep), error
            refused[type(error).__name__] += 1
            return
        assert status < 400 and len(content) <= ANSWER_LIMIT and not json_nesting_exceeds(content)

    check()
    cases.require(ANSWER_CASES)
    assert refused["ResponseTooLarge"] >= 20 and refused["JsonTooDeep"] >= 20, refused
