"""Checking a journal's hash chain one row at a time: what ``verify`` does, and what every reader
does as it reads.

``ChainCheck(table_id, hasher, anchors)``: ``feed(row)`` each row of ``entries`` (all columns, in
schema order) in ``seq`` order, then ``finish()``. The first failure is kept (``reason``, one line;
``first_bad_seq``); ``good`` counts the entries before it, ``last_seq``/``last_hash`` are those of
the last good one. With ``hasher=None`` (an HMAC journal read without its key) every check is made
except recomputing the hashes: the ``seq`` order, the ``prev_hash`` links, the columns.

``anchors`` maps a ``seq`` to the hashes the entry must have, each with where it came from
(``--anchor``, ``FILE line N``). An entry whose hash differs from its anchor proves that the
journal was rewritten at that entry or before, back to the last entry an anchor proved
(``anchored``: the chain's start when none did): the verdict then counts as good only the entries
up to that one (a forger who recomputed every hash after an edit at entry 4467 was told "6147
entries good" by an anchor at 6148, when only the 3098 up to the anchor before held: a
surveillance review). A check that starts within the chain (``anchored=None``: the later half of a
split verify) and finds an anchor differ before any holds leaves ``anchor_said`` for the check of
the first half to place (``anchor_failure``).

``feed_rows(rows)`` feeds many rows with the same verdict, faster: an entry that passes every check
is recognised without the reference's work (the payload's canonical form by its shape,
``controller.journal.shapes``, the entry's kind naming the group of its type shapes; the hashed body spliced from JSON text kept per combination of the
columns that repeat: kind, shoe, device, operator), and any entry it cannot vouch for goes through
``feed``, which finds the reason. Every reader of a journal checks through it
(``verify.CheckedRead``).
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from json.encoder import encode_basestring
from typing import Any

from controller.journal.chain import GENESIS_HASH, HMAC_SHA256, SHA256, Hasher, canonical_json, decode_payload_strict, entry_body
from controller.journal.entry import TIMESTAMP_SHAPE, parse_ts
from controller.journal.shapes import DIGITS_AS_ZERO, UNKNOWN, ZERO, PayloadShapes

AnchorMap = Mapping[int, Sequence[tuple[str, str]]]  # seq -> [(hash, where it came from)]

_NO_TIMESTAMP = object()  # equal to no column's value: a check's first row is always checked, whatever it holds
BATCH_ROWS = 256  # rows checked a batch: small enough to stay in the CPU cache (4096 rows: 20-25 % slower)
_MAX_HEADS = 65536  # a journal's kinds, shoes, devices and operators repeat, in few combinations


class ChainCheck:
    """See the module docstring."""

    def __init__(self, table_id: str, hasher: Hasher | None, anchors: AnchorMap | None = None) -> None:
        self.table_id = table_id
        self.hasher = hasher
        self.anchors = anchors or {}
        self.good = 0
        self.last_seq = 0
        self.last_hash = GENESIS_HASH
        self.reason: str | None = None
        self.first_bad_seq: int | None = None
        # The last entry an anchor proved, (seq, hash, good): the chain's start until one does.
        self.anchored: tuple[int, str, int] | None = (0, GENESIS_HASH, 0)
        self.anchor_said: str | None = None
        self._shapes = PayloadShapes()
        self._heads: dict[tuple[str, str | None, str | None, int | None, str | None], tuple[str, str, str]] = {}
        # The last timestamp the fast path checked (as ``parse_ts`` does) and its JSON text: most entries
        # share their timestamp with the entry before (a transaction's records), and are spared both.
        self._ts_seen: tuple[object, str] = (_NO_TIMESTAMP, "")

    @property
    def ok(self) -> bool:
        return self.reason is None

    def fail(self, seq: int | None, reason: str) -> bool:
        """Record a failure (the first one counts); False."""
        if self.reason is None:
            self.reason, self.first_bad_seq = reason, seq
        return False

    def fail_before(self, seq: int | None, reason: str) -> bool:
        """Record a failure that comes before any recorded one (a check run later than the
        order of the verdict puts it); False."""
        self.reason, self.first_bad_seq = reason, seq
        return False

    def feed(self, row: Sequence[Any]) -> bool:
        """Check the next row; True while the chain holds (after a failure: False, unchecked)."""
        if self.reason is not None:
            return False
        seq, expected = row[0], self.last_seq + 1
        if not isinstance(seq, int) or seq < expected:
            return self.fail(seq if isinstance(seq, int) else expected, f"unexpected seq {seq!r} (expected {expected})")
        if seq > expected:
            return self.fail(expected, f"{missing_entries(expected, seq - 1)} (the next entry is {seq}): deleted?")
        reason = check_row(row, self.last_hash, self.hasher, self.table_id)
        if reason is not None:
            return self.fail(seq, f"entry {seq}: {reason}")
        held = self.anchors.get(seq, ())
        for anchored, where in held:
            if anchored != row[12]:
                return self.anchor_failure(seq, f"entry {seq}: hash {row[12]} differs from the anchor {anchored} ({where})")
        self.last_seq, self.last_hash = seq, row[12]
        self.good += 1
        if held:
            self.anchored = (seq, row[12], self.good)
        return True

    def anchor_failure(self, seq: int, said: str) -> bool:
        """Entry ``seq`` differs from its anchor (``said``): the verdict goes back to ``anchored``, the
        last entry an anchor proved (None: unknown here, ``anchor_said`` keeps ``said``); False."""
        anchored = self.anchored
        if anchored is None:
            self.anchor_said = said
            return self.fail(seq, said)
        proven, proven_hash, good = anchored
        self.good, self.last_seq, self.last_hash = good, proven, proven_hash
        since = f"after entry {proven}, the last an anchor proves" if proven else "and no anchor before it holds"
        return self.fail(seq, f"{said}: the journal was rewritten at an entry from {proven + 1} to {seq} ({since})")

    def feed_rows(self, rows: Sequence[Sequence[Any]]) -> bool:
        """``feed`` each row in turn, until a failure: the same verdict, faster (module docstring)."""
        hasher = self.hasher
        if self.reason is not None or hasher is None:
            return all(map(self.feed, rows))
        sha256 = hashlib.sha256 if hasher.algorithm == SHA256 else None
        hex_digest, anchors, table_id = hasher.hex_digest, self.anchors, self.table_id
        unknown_digits, shape_lead = self._shapes.unknown_digits, self._shapes.known.get
        parse_naive, ts_shape, heads, head_of = datetime.fromisoformat, TIMESTAMP_SHAPE, self._heads, self._head
        last_seq, prev, good = self.last_seq, self.last_hash, self.good
        last_ts, quoted_ts = self._ts_seen
        for row in rows:
            (seq, ts, kind, row_table, shoe_id, round_no, device_serial, device_epoch, device_counter, operator,
             payload, prev_hash, digest) = row
            # The columns meant to hold text are spliced in through encode_basestring, which takes
            # nothing else (TypeError); those meant to hold integers are checked here.
            if (seq == last_seq + 1 and type(seq) is int and prev_hash == prev and row_table == table_id
                    and seq not in anchors and (round_no is None or type(round_no) is int)
                    and (device_epoch is None or type(device_epoch) is int)
                    and (device_counter is None or (type(device_counter) is int and device_serial is not None
                                                    and device_epoch is not None))):
                try:
                    if ts != last_ts:  # else: a text equal to one that passed these checks
                        if not ts_shape(ts):  # parse_ts's checks, inlined
                            raise ValueError("not a journal timestamp")
                        parse_naive(ts[:26])  # parse_ts, without the time zone it adds
                        quoted_ts = encode_basestring(ts)
                        last_ts = ts
                    try:  # an empty ``kind`` never has a head (``_head``)
                        before_round, before_counter, before_payload = heads[kind, shoe_id, device_serial, device_epoch,
                                                                             operator]
                    except KeyError:
                        before_round, before_counter, before_payload = head_of((kind, shoe_id, device_serial,
                                                                                device_epoch, operator))
                    body = (f"{prev}[{seq},{quoted_ts}{before_round}{'null' if round_no is None else round_no}"
                            f"{before_counter}{'null' if device_counter is None else device_counter}"
                            f"{before_payload}{payload}]").encode()
                    if (sha256(body).hexdigest() if sha256 else hex_digest(body)) == digest:
                        data = payload.encode()
                        shape = data.translate(DIGITS_AS_ZERO)  # PayloadShapes.is_canonical, inlined
                        lead = shape_lead(shape, UNKNOWN)
                        if lead is None or (ZERO not in lead(data) if lead is not UNKNOWN
                                            else unknown_digits(payload, data, kind, shape)):
                            last_seq, prev, good = seq, digest, good + 1
                            continue
                except (TypeError, AttributeError, ValueError):
                    pass  # the reference finds what
            self.last_seq, self.last_hash, self.good = last_seq, prev, good
            if not self.feed(row):
                self._ts_seen = (last_ts, quoted_ts)
                return False
            last_seq, prev, good = self.last_seq, self.last_hash, self.good
        self.last_seq, self.last_hash, self.good = last_seq, prev, good
        self._ts_seen = (last_ts, quoted_ts)
        return True

    def _head(self, columns: tuple[str, str | None, str | None, int | None, str | None]) -> tuple[str, str, str]:
        """The hashed body's text around ``round_no``, ``device_counter`` and ``payload`` for the
        columns that repeat (``kind, shoe_id, device_serial, device_epoch, operator``, checked to be
        text, or an integer for ``device_epoch``; the journal's ``table_id``), as ``entry_body``
        writes it; kept for the combinations that repeat. TypeError for a column of another type,
        ValueError for an empty ``kind``."""
        kind, shoe_id, device_serial, device_epoch, operator = columns
        if device_epoch is not None and type(device_epoch) is not int:
            raise TypeError("device_epoch")
        if not kind:
            raise ValueError("an empty kind")
        texts = [encode_basestring(text) if text is not None else "null"
                 for text in (kind, self.table_id, shoe_id, device_serial, operator)]
        head = (f",{texts[0]},{texts[1]},{texts[2]},", f",{texts[3]},{'null' if device_epoch is None else device_epoch},",
                f",{texts[4]},")
        if len(self._heads) < _MAX_HEADS:
            self._heads[columns] = head
        return head

    def finish(self, expect_count: int | None = None, expect_last_hash: str | None = None) -> bool:
        """The checks at the end: anchors beyond the last entry, the expected count and last hash."""
        if self.reason is not None:
            return False
        last = self.last_seq
        beyond = sorted(s for s in self.anchors if s > last)
        if beyond:
            where = self.anchors[beyond[0]][0][1]
            return self.fail(beyond[0], f"entry {beyond[0]} of an anchor ({where}) is missing: the journal ends at "
                                        f"{last} (truncated?)")
        if expect_count is not None and last != expect_count:
            if last < expect_count:
                return self.fail(last + 1, f"the journal has {last} entries, {expect_count} expected: truncated?")
            self.good = min(self.good, expect_count)  # the first bad entry is the first one not expected
            return self.fail(expect_count + 1, f"the journal has {last} entries, {expect_count} expected: "
                                               f"entries {expect_count + 1} to {last} were added")
        if expect_last_hash is not None and self.last_hash != expect_last_hash.lower():
            return self.fail(last or None, f"the last hash is {self.last_hash}, {expect_last_hash} expected")
        return True


def missing_entries(first: int, last: int) -> str:
    """``entry N is missing`` or ``entries N-M are missing``: a chain's gap, in words."""
    return f"entry {first} is missing" if first == last else f"entries {first}-{last} are missing"


def check_row(row: Sequence[Any], prev: str, hasher: Hasher | None, table_id: str) -> str | None:
    """Why ``row`` does not follow an entry whose hash is ``prev`` (None when it does)."""
    (seq, ts, kind, row_table, shoe_id, round_no, device_serial, device_epoch, device_counter, operator,
     payload, prev_hash, digest) = row
    if prev_hash != prev:
        where = "the genesis hash" if seq == 1 else f"the hash of entry {seq - 1}"
        return (f"prev_hash does not match {where}: an entry before it was deleted, inserted or moved, "
                "or this one was")
    if not (type(ts) is str and type(kind) is str and type(row_table) is str and type(payload) is str
            and type(digest) is str and _opt(shoe_id, str) and _opt(round_no, int) and _opt(device_serial, str)
            and _opt(device_epoch, int) and _opt(device_counter, int) and _opt(operator, str)):
        for name, value, kind_of, optional in (
            ("ts", ts, str, False), ("kind", kind, str, False), ("table_id", row_table, str, False),
            ("shoe_id", shoe_id, str, True), ("round_no", round_no, int, True), ("device_serial", device_serial, str, True),
            ("device_epoch", device_epoch, int, True), ("device_counter", device_counter, int, True),
            ("operator", operator, str, True), ("payload", payload, str, False), ("hash", digest, str, False),
        ):
            if not (value is None and optional) and type(value) is not kind_of:
                return f"column {name} holds {_sql_type(value)}, not {_sql_type(kind_of())}"
    if hasher is not None:
        expect = hasher.digest(prev, entry_body(seq, ts, kind, row_table, shoe_id, round_no, device_serial,
                                                device_epoch, device_counter, operator, payload))
        if expect != digest:
            forged = " or forged without the HMAC key" if hasher.algorithm == HMAC_SHA256 else ""
            return f"hash mismatch: the entry was edited{forged}"
    # The hash is right (or cannot be recomputed), so what follows was written with a valid hash:
    # a bug, or a forger.
    try:
        if canonical_json(decode_payload_strict(payload)) != payload:
            return "payload is not canonical JSON"
        if payload[:1] != "{":
            return "payload is not a JSON object"
    except RecursionError:  # Python's words named its own recursion limit (a review of bad inputs)
        return "bad payload: nested too deeply to read"
    except ValueError as exc:  # PayloadError is a ValueError
        return f"bad payload: {exc}"
    try:
        parse_ts(ts)
    except ValueError:
        return f"bad timestamp {ts!r}"
    if not kind:
        return "empty kind"
    if row_table != table_id:
        return f"table_id {row_table!r} differs from the journal's {table_id!r}"
    if device_counter is not None and (device_serial is None or device_epoch is None):
        return "device_counter without device_serial and device_epoch"
    return None


def _opt(value: Any, kind_of: type) -> bool:
    return value is None or type(value) is kind_of


def _sql_type(value: object) -> str:
    """What a column holds, in SQL's words (a check's message is for a person, not a programmer)."""
    if value is None:
        return "no value (NULL)"
    if isinstance(value, bytes):
        return "a blob of bytes"
    if isinstance(value, float):
        return "a real number"
    return "an integer" if isinstance(value, int) else "text"
