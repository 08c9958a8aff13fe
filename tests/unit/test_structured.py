"""Structured input (JSON, TOML) is parsed within the named limits, and every refusal
names the file and what was expected."""

from __future__ import annotations

import json
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktop.input_limits import MAX_NESTING, MAX_NUMBER_DIGITS
from ktop.structured import InputRefusedError, load_json, load_toml

LONG = "7" * (MAX_NUMBER_DIGITS.value + 1)


@pytest.mark.parametrize(
    "doc",
    [
        f'{{"a": {LONG}}}',
        f'{{"a": -{LONG}}}',
        f'{{"a": {LONG}.5}}',
        '{"a": ' + "9" * 5000 + "}",
    ],
)
def test_json_long_number_named(doc: str) -> None:
    with pytest.raises(InputRefusedError) as info:
        load_json(doc, "api/nodes.json")
    assert "api/nodes.json" in str(info.value)
    assert "digits" in str(info.value)
    assert "sys.set_int_max_str_digits" not in str(info.value)


def test_json_deep_nesting_named() -> None:
    with pytest.raises(InputRefusedError) as info:
        load_json("[" * 100_000 + "]" * 100_000, "api/pods.json")
    assert str(info.value).startswith("api/pods.json line 1: nested 100000 levels deep")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_constants_are_not_json(constant: str) -> None:
    with pytest.raises(InputRefusedError, match=r"x\.json"):
        load_json(f'{{"at": {constant}}}', "x.json")


def test_json_syntax_and_encoding_named() -> None:
    with pytest.raises(InputRefusedError, match=r"^b.json line 2: not valid JSON"):
        load_json('{"a":\n ]', "b.json")
    with pytest.raises(InputRefusedError, match=r"^c.json: not UTF-8"):
        load_json(b'{"a": "\xff"}', "c.json")


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(10**50), 10**50)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=30,
    )
)
def test_json_within_limits_reads_as_the_standard_parser(value: object) -> None:
    text = json.dumps(value)
    assert load_json(text, "v.json") == json.loads(text)


def test_toml_long_number_named_with_line() -> None:
    with pytest.raises(InputRefusedError) as info:
        load_toml(f"name = 'x'\nrefresh = {LONG}\n", "config.toml")
    assert str(info.value).startswith("config.toml line 2: a number longer than")


def test_toml_deep_nesting_named() -> None:
    depth = MAX_NESTING.value + 1
    with pytest.raises(InputRefusedError, match=r"^theme.toml line 1: nested 65 levels"):
        load_toml("a = " + "[" * depth + "]" * depth, "theme.toml")


def test_toml_brackets_in_strings_and_comments_do_not_count() -> None:
    many = "[" * (MAX_NESTING.value * 2)
    text = f"a = \"{many}\"\nb = '{many}'\n# {many}\nc = [[1], [2]]\n"
    assert load_toml(text, "ok.toml") == tomllib.loads(text)


def test_toml_nesting_at_the_limit_reads() -> None:
    depth = MAX_NESTING.value
    text = "a = " + "[" * depth + "]" * depth
    assert load_toml(text, "ok.toml") == tomllib.loads(text)
