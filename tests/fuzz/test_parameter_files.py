"""Fuzzing the readers of the JSON and YAML files a user hands the newspaper flows: an order body
(``load_order``) and the purchase parameters (``load_purchase_parameters``). Whatever the bytes, the reader
returns what it reads or refuses the file by name.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from connectors.newspaper.models import GratisOrder, StandardOrder
from fileio.errors import InputError
from fileio.newspaper.order_input import load_order
from fileio.newspaper.purchase_input import load_purchase_parameters
from tests.fuzz.conftest import CaseCount, fuzz_settings
from tests.fuzz.generators import damage, randoms
from tests.fuzz.oracles import check_refusal

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_ENCODINGS = ("utf-8", "utf-8-sig", "cp1252", "utf-16")
# JSON and YAML parse in microseconds; a few thousand cases reach every branch of these small readers.
CASES = 2_000


def _examples(pattern: str) -> list[bytes]:
    return [path.read_bytes() for path in sorted(EXAMPLES.glob(pattern))]


@st.composite
def parameter_files(draw: st.DrawFn, examples: tuple[bytes, ...]) -> bytes:
    """A real example, damaged or re-encoded; a JSON document of any shape; or random bytes."""
    rnd: random.Random = draw(randoms)
    kind = rnd.randrange(5)  # the seeded generator spreads the kinds evenly; hypothesis favours 0
    if kind == 0:
        return draw(st.binary(max_size=200))
    base = rnd.choice(examples)
    if kind == 1:
        return base.decode("utf-8").encode(rnd.choice(_ENCODINGS), errors="replace")
    if kind == 2:
        body = json.loads(base)
        key = rnd.choice(list(body)) if isinstance(body, dict) and body else "x"
        odd = rnd.choice((None, [], {}, "", 10**30, float("nan"), "2030-02-30", [{"a": 1}], True))
        return json.dumps({**body, key: odd} if isinstance(body, dict) else odd).encode()
    return damage(rnd, base, rnd.randrange(1, 4))


ORDER_EXAMPLES = tuple(_examples("*order*.json"))
PARAMETER_EXAMPLES = tuple(_examples("purchase.json"))


def test_order_files_are_read_or_refused_by_name(scratch: Path) -> None:
    cases = CaseCount("load_order: order files (.json)")

    @fuzz_settings(CASES)
    @given(data=parameter_files(ORDER_EXAMPLES), gratis=st.booleans())
    def check(data: bytes, gratis: bool) -> None:
        path = scratch / "order.json"
        path.write_bytes(data)
        cases.add()
        try:
            order = load_order(path, "gratis" if gratis else "standard")
        except InputError as error:
            check_refusal(error, path)
            return
        assert isinstance(order, GratisOrder if gratis else StandardOrder)

    check()
    cases.require(CASES)


def test_purchase_parameter_files_are_read_or_refused_by_name(scratch: Path) -> None:
    cases = CaseCount("load_purchase_parameters: parameter files (.json .yaml)")

    @fuzz_settings(CASES)
    @given(data=parameter_files(PARAMETER_EXAMPLES), suffix=st.sampled_from((".json", ".yaml", ".yml")))
    def check(data: bytes, suffix: str) -> None:
        path = scratch / f"purchase{suffix}"
        path.write_bytes(data)
        cases.add()
        try:
            parameters = load_purchase_parameters(path)
        except InputError as error:
            check_refusal(error, path)
            return
        assert isinstance(parameters, dict) and "addresses" not in parameters

    check()
    cases.require(CASES)
