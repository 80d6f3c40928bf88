"""The journal store's values: the payloads and columns append refuses (floats above all), what
reads back, and random payloads round-tripping through real SQLite files."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.journal import Journal, JournalReader, PayloadError, canonical_json, format_ts, verify

from tampering import rows

from .conftest import FakeClock

# --- values the journal refuses ------------------------------------------------------------------


@pytest.mark.parametrize("payload, where", [
    ({"amount": 12.5}, "payload['amount'] is a float"),
    ({"bets": [{"amount": 1.0}]}, "payload['bets'][0]['amount'] is a float"),
    ({"x": float("nan")}, "is a float"),
    ({"x": float("inf")}, "is a float"),
    ({"x": (1, 2.5)}, "payload['x'][1] is a float"),
    ({1: "a"}, "non-string key"),
    ({"x": {1, 2}}, "is a set"),
    ({"x": b"bytes"}, "is a bytes"),
    ({"x": "\ud800"}, "not valid Unicode"),
    ([1, 2], "must be a dict"),
    (None, "must be a dict"),
])
def test_refused_payloads(journal: Journal, payload, where) -> None:
    with pytest.raises(PayloadError, match=where.replace("[", "\\[").replace("]", "\\]").replace("(", "\\(")):
        journal.append("bet", payload)
    assert journal.last_seq == 0


def test_decimal_gets_a_hint(journal: Journal) -> None:
    from decimal import Decimal
    with pytest.raises(PayloadError, match="use int minor units or str"):
        journal.append("bet", {"amount": Decimal("1.50")})


def test_circular_and_deep_payloads(journal: Journal) -> None:
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(PayloadError, match="circular"):
        journal.append("x", loop)
    deep: dict = {}
    d = deep
    for _ in range(3000):
        d["d"] = {}
        d = d["d"]
    with pytest.raises(PayloadError, match="nested too deeply"):
        journal.append("x", deep)
    shared = {"a": 1}
    assert journal.append("x", {"p": shared, "q": shared, "r": [shared, shared]}).seq == 1  # shared, not circular
    fine: dict = {}
    d = fine
    for _ in range(100):
        d["d"] = {}
        d = d["d"]
    assert journal.append("x", fine).payload == fine


def test_tuples_read_back_as_lists(journal: Journal) -> None:
    e = journal.append("x", {"cards": ("AS", "9H"), "n": [1, (2, 3)]})
    assert e.payload == {"cards": ["AS", "9H"], "n": [1, [2, 3]]} == journal.get(1).payload


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": ""}, "kind must not be empty"),
    ({"kind": 5}, "kind must be a str"),
    ({"shoe": 12}, "shoe must be a str"),
    ({"round": "3"}, "round must be an int"),
    ({"round": True}, "round must be an int"),
    ({"round": -1}, "between 0"),
    ({"counter": 1}, "device_serial, epoch and counter together"),
    ({"device_serial": "d", "counter": 1}, "device_serial, epoch and counter together"),
    ({"epoch": 1}, "epoch given without device_serial"),
    ({"device_serial": "d", "epoch": 1, "counter": 2**63}, "between 0"),
    ({"operator": b"x"}, "operator must be a str"),
])
def test_refused_columns(journal: Journal, kwargs, match) -> None:
    kw = {"kind": "k", **kwargs}
    kind = kw.pop("kind")
    with pytest.raises(PayloadError, match=match):
        journal.append(kind, {}, **kw)
    assert journal.last_seq == 0


def test_clock_must_be_aware(journal_path: Path) -> None:
    from datetime import datetime
    with Journal.open(journal_path, table_id="T1", clock=FakeClock()) as j:
        j._clock = lambda: datetime(2025, 1, 1)
        with pytest.raises(ValueError, match="naive"):
            j.append("x", {})
        j._clock = FakeClock()
        assert j.append("x", {}).seq == 1
    assert format_ts(FakeClock()()) == "2025-01-31T20:15:00.001000Z"


def test_no_float_in_any_stored_payload(journal: Journal) -> None:
    journal.append("x", {"big": 10**30, "neg": -5, "s": "1.5"})
    text = rows(journal.path)[0][10]
    assert json.loads(text, parse_float=lambda s: pytest.fail(f"float {s} stored")) == {"big": 10**30, "neg": -5, "s": "1.5"}


# --- hypothesis: random payloads round-trip --------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**20), max_value=10**20)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
payloads = st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), max_size=10), json_values, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(payloads, min_size=1, max_size=5))
def test_random_payloads_round_trip(items) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "j.db"
        with Journal.open(p, table_id="T1") as j:
            written = [j.append("k", payload) for payload in items]
            assert [e.payload for e in written] == items
        with JournalReader.open(p) as r:
            back = list(r.entries())
        assert [e.payload for e in back] == items and back == written
        assert [row[10] for row in rows(p)] == [canonical_json(x) for x in items]
        assert verify(p).ok


@settings(max_examples=60, deadline=None)
@given(payload=payloads, where=st.data())
def test_a_float_anywhere_is_refused(payload, where) -> None:
    """Put a float at a random place in a random payload: append refuses it, whatever the place."""
    target = payload
    path = "payload"
    while True:
        containers = [k for k, v in target.items() if isinstance(v, dict)] if isinstance(target, dict) else []
        if not containers or not where.draw(st.booleans()):
            break
        key = where.draw(st.sampled_from(containers))
        target, path = target[key], f"{path}[{key!r}]"
    target["__f"] = where.draw(st.floats(allow_nan=True))
    from controller.journal.chain import encode_payload
    with pytest.raises(PayloadError, match="is a float"):
        encode_payload(payload)
