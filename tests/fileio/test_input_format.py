"""InputFormat: how a table file is read where detection is not enough, one value from the request to the
reader."""

from __future__ import annotations

import dataclasses

import pytest

from fileio.input_format import InputFormat


def test_fixed_widths_given_as_a_mapping_keep_their_column_order() -> None:
    fmt = InputFormat.of(
        delimiter=";", encoding="cp1252", sheet="Kunden", fixed_widths={"Name": 10, "PLZ": 4}
    )
    assert fmt == InputFormat(";", "cp1252", "Kunden", (("Name", 10), ("PLZ", 4)))
    assert InputFormat.of(fixed_widths={}) == InputFormat()


def test_its_text_which_the_address_flows_work_key_hashes_is_unchanged() -> None:
    """The work key of an address batch or query hashes ``repr`` of the format: a run started before the
    format moved to fileio resumes under the same key."""
    fmt = InputFormat.of(delimiter="|", fixed_widths={"Name": 10})
    assert repr(fmt) == "InputFormat(delimiter='|', encoding=None, sheet=None, fixed_widths=(('Name', 10),))"
    assert repr(InputFormat()) == "InputFormat(delimiter=None, encoding=None, sheet=None, fixed_widths=None)"


def test_it_is_a_value() -> None:
    fmt = InputFormat(sheet="Adressen")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fmt.sheet = "Kunden"  # type: ignore[misc]
    assert hash(fmt) == hash(InputFormat(sheet="Adressen"))
