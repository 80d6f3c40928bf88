"""The writer's fast encodings give what the chain's definitions give (docs/journal.md): a payload
is encoded once (``encode_payload_parts``: its canonical text, that text's UTF-8, and the value as
it reads back), the hashed body is built from those bytes (``entry_body_bytes``), and a UTC
timestamp is formatted without a conversion (``format_ts``); a batch whose results nobody reads
is stored as any other."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from controller.journal.chain import (
    canonical_json,
    encode_payload_parts,
    encode_payload_value,
    entry_body,
    entry_body_bytes,
)
from controller.journal import Journal, verify
from controller.journal.entry import format_ts
from controller.journal.store import Record

from .conftest import FakeClock

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_json = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | _text,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                     max_leaves=12)
_optional_int = st.none() | st.integers(0, 2**63 - 1)


@given(payload=st.dictionaries(_text, _json, max_size=6))
def test_a_payload_is_encoded_once_as_the_reference_encodes_it(payload: dict) -> None:
    text, data, value = encode_payload_parts(payload)
    assert text == json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert text == canonical_json(payload) and data == text.encode("utf-8")
    assert value == json.loads(text) and (text, value) == encode_payload_value(payload)


@given(seq=st.integers(1, 2**63 - 1), ts=_text, kind=_text, table_id=_text, shoe=st.none() | _text,
       round_no=_optional_int, serial=st.none() | _text, epoch=_optional_int, counter=_optional_int,
       operator=st.none() | _text, payload=st.dictionaries(_text, _json, max_size=4))
def test_the_body_from_the_payload_bytes_is_the_chains_body(seq, ts, kind, table_id, shoe, round_no, serial, epoch,
                                                            counter, operator, payload) -> None:
    text = canonical_json(payload)
    head = [seq, ts, kind, table_id, shoe, round_no, serial, epoch, counter, operator]
    reference = (json.dumps(head, separators=(",", ":"), ensure_ascii=False)[:-1] + "," + text + "]").encode()
    assert entry_body(*head, text) == reference
    assert entry_body_bytes(*head, text.encode("utf-8")) == reference


def test_a_utc_timestamp_is_formatted_as_any_other_zone_is() -> None:
    moment = datetime(2026, 12, 1, 4, 5, 6, 78, tzinfo=timezone.utc)
    assert format_ts(moment) == "2026-12-01T04:05:06.000078Z"
    assert format_ts(moment.astimezone(timezone(timedelta(hours=-5)))) == "2026-12-01T04:05:06.000078Z"
    assert format_ts(moment.replace(microsecond=0)) == "2026-12-01T04:05:06.000000Z"


def test_a_batch_stored_without_results_is_the_same_journal(tmp_path: Path) -> None:
    """The owner's ``append_batch(..., results=False)`` builds no entries to return; what it stores
    (and how a resent device event in it is told apart) is what a batch with results stores."""
    batches = [[Record("input.device", {"n": i}, shoe="S1", round=1, device_serial="D1", epoch=1, counter=i + 1),
                Record("card", {"card": "QH", "n": i}, shoe="S1", round=1)] for i in range(3)]
    stored = []
    for name, results in (("with.db", True), ("without.db", False)):
        with Journal.open(tmp_path / name, table_id="T1", clock=FakeClock()) as journal:
            returned = [journal.append_batch(batch, results=results) for batch in batches]
            again = journal.append_batch([batches[1][0], Record("note", {"after": "resend"})], results=results)
            assert (again[0] is None) if results else again == []
            assert all(len(r) == 2 for r in returned) if results else returned == [[], [], []]
            stored.append([e.to_json() for e in journal.entries()])
    assert stored[0] == stored[1] and len(stored[0]) == 7
    assert verify(tmp_path / "without.db").ok
