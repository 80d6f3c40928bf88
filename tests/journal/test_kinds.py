"""The registry of record kinds (controller/journal/kinds.py) against docs/journal.md, against the
kinds the code spells, and against the records of real runs; the wire names of device events."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from controller.journal import JournalReader, kinds
from controller.journal.vocabulary import V1_EVENT_NAMES, current_payload
from controller.rules.cards import SUITS, card_from_wire
from controller.rules.errors import CardError
from firmware_bridge.protocol import messages as m

from cli_run import dealt_journal

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "journal.md"

# The calls that make a journal record, whose first argument is the record's kind.
_RECORDING_CALLS = {"record", "_record", "Record", "JournalRecord", "note", "_note", "note_record", "refused", "_refused",
                    "prepare"}


def _documented_kinds() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """docs/journal.md's "Record kinds" tables: kind -> (keys, optional keys)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Record kinds\n", 1)[1].split("\n## ", 1)[0]
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for line in section.splitlines():
        row = re.match(r"\| `([a-z_.]+)` \| ([^|]*) \|", line)
        if row is None:
            continue
        assert row.group(1) not in out, f"{row.group(1)} is listed twice in docs/journal.md"
        keys = re.findall(r"`([a-z_0-9]+)`(\??)", row.group(2))
        out[row.group(1)] = (tuple(k for k, opt in keys if not opt), tuple(k for k, opt in keys if opt))
    return out


def test_the_doc_lists_every_kind_of_the_registry_with_its_payload_and_no_other() -> None:
    documented = _documented_kinds()
    registered = {k.name: (k.keys, k.optional) for k in kinds.KINDS.values()}
    assert sorted(set(registered) - set(documented)) == [], "registered but not in docs/journal.md"
    assert sorted(set(documented) - set(registered)) == [], "in docs/journal.md but not registered"
    assert {k: (set(a), set(b)) for k, (a, b) in documented.items()} == \
           {k: (set(a), set(b)) for k, (a, b) in registered.items()}


def test_the_registry_is_consistent() -> None:
    assert all(name == k.name and k.meaning and k.keys for name, k in kinds.KINDS.items())
    assert all(not set(k.keys) & set(k.optional) for k in kinds.KINDS.values())
    constants = {v for n, v in vars(kinds).items() if n.isupper() and isinstance(v, str)}
    assert constants == set(kinds.KINDS)  # a constant for every kind, and a kind for every constant
    assert set(kinds.INPUT_KINDS) <= set(kinds.KINDS)


def _spelled_kinds() -> dict[str, list[str]]:
    """Every kind the production code writes: the first argument of a call that makes a record
    (text, or a ``kinds.`` constant), and the value of a module's ``*_KIND`` constant; kind ->
    where."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "controller").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        constants = [n for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Constant, ast.Attribute))
                     and any(isinstance(t, ast.Name) and t.id.endswith("_KIND") for t in n.targets)]
        for node in [*ast.walk(tree)]:
            value = None
            if isinstance(node, ast.Call) and node.args:
                func, first = node.func, node.args[0]
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
                if name in _RECORDING_CALLS and isinstance(first, ast.Constant):
                    value = first.value
                elif name in _RECORDING_CALLS and isinstance(first, ast.Attribute) and \
                        isinstance(first.value, ast.Name) and first.value.id == "kinds":
                    value = getattr(kinds, first.attr)
            elif node in constants and isinstance(node.value, ast.Constant):  # type: ignore[attr-defined]
                value = node.value.value  # type: ignore[attr-defined]
            elif node in constants and isinstance(node.value.value, ast.Name) and node.value.value.id == "kinds":  # type: ignore[attr-defined]
                value = getattr(kinds, node.value.attr)  # type: ignore[attr-defined]
            if isinstance(value, str):
                found.setdefault(value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_kind_the_code_writes_is_registered_and_every_registered_kind_is_written() -> None:
    written = _spelled_kinds()
    unknown = {kind: where for kind, where in written.items() if kind not in kinds.KINDS}
    assert unknown == {}
    assert sorted(set(kinds.KINDS) - set(written)) == []


def _run_table(journal: Path, *extra: str) -> None:
    dealt_journal(journal, *extra)


@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat"])
def test_every_record_of_a_real_run_fits_its_kind(preset: str, tmp_path: Path) -> None:
    """A whole shoe dealt by `shoectl run` (squeezes in Midibaccarat, Dragon 7 and Panda 8 in EZ
    Baccarat, the Bonus cards in 21 Baccarat: a review found its key left out): every entry's kind is registered and its payload has its kind's keys, no other."""
    journal = tmp_path / "table.db"
    _run_table(journal, "--shoes", "1", "--seed", "7", "--submission", preset)
    with JournalReader.open(journal) as r:
        entries = list(r.entries())
    assert {e.schema_version for e in entries} == {2}
    assert [(e.seq, e.kind, kinds.payload_problem(e.kind, e.payload)) for e in entries
            if kinds.payload_problem(e.kind, e.payload)] == []
    seen = {e.kind for e in entries}
    assert {kinds.INPUT_DEVICE, kinds.INPUT_OPERATOR, kinds.INPUT_STATUS, kinds.ROUND_RESULT,
            kinds.RECONCILIATION, kinds.CARDSET} <= seen
    events = {e.payload["event"] for e in entries if e.kind == kinds.INPUT_DEVICE}
    assert {"CARD_READ", "SHUFFLE_DONE", "SHOE_LOADED", "COVER_CARD"} <= events
    assert all(m.message_class_named(name).TYPE.name == name for name in events)


def test_payload_problem_names_what_is_wrong() -> None:
    assert kinds.payload_problem(kinds.CUT, {"position": 80, "by": "seat 2", "stack": 416}) is None
    assert kinds.payload_problem("cut.made", {}) == "unknown record kind 'cut.made'"
    assert kinds.payload_problem(kinds.CUT, {"position": 80}) == "cut: payload without by, stack"
    assert kinds.payload_problem(kinds.INPUT_DEVICE, {"device_role": "shoe", "event": "CARD_READ", "fields": {},
                                                      "role": "shoe"}) == \
        "input.device: payload keys role are not in the registry"


# --- wire names and cards ------------------------------------------------------------------------------


def test_every_message_has_one_wire_name_and_back() -> None:
    for cls in m.MESSAGE_CLASSES:
        assert m.wire_name(cls) == cls.TYPE.name and m.message_class_named(m.wire_name(cls)) is cls
    assert m.wire_name(m.CardRead(12, 2, False, 17, 1234)) == "CARD_READ"
    for bad in ("CardRead", "card_read", "", None, 0x80):
        with pytest.raises(m.UnknownMessageTypeError):
            m.message_class_named(bad)  # type: ignore[arg-type]


def test_version_1_event_names_are_the_device_events_wire_names() -> None:
    """Frozen: the class names version 1 wrote, each mapped to a device event's wire name, every
    device event once."""
    events = {cls for cls in m.MESSAGE_CLASSES if issubclass(cls, m.DeviceEvent)}
    assert {m.message_class_named(name) for name in V1_EVENT_NAMES.values()} == events
    assert len(set(V1_EVENT_NAMES.values())) == len(V1_EVENT_NAMES) == len(events)


def test_card_from_wire_reads_the_protocol_suits() -> None:
    """docs/protocol.md: "Suits in CARD_READ: 0 clubs, 1 diamonds, 2 hearts, 3 spades"."""
    for suit in m.Suit:
        assert card_from_wire(12, suit).suit == suit.name[0] == SUITS[suit]
        assert str(card_from_wire(1, int(suit))) == "A" + suit.name[0]
    assert [str(card_from_wire(r, 2)) for r in (1, 10, 11, 13)] == ["AH", "10H", "JH", "KH"]
    for rank, suit in ((m.CARD_UNREADABLE, m.CARD_UNREADABLE), (0, 0), (14, 0), (1, 4), (1, -1), (True, 0),
                       (1, True), ("1", 0)):
        with pytest.raises(CardError, match="no such card"):
            card_from_wire(rank, suit)  # type: ignore[arg-type]


def test_v1_words_become_v2_words_and_v2_words_stay() -> None:
    from controller.journal.entry import Entry

    def entry(kind: str, payload: dict, version: int) -> Entry:
        return Entry(1, "2025-01-31T20:15:00.000000Z", kind, "T1", None, None, None, None, None, None, payload,
                     "0" * 64, "0" * 64, version)

    old = entry(kinds.INPUT_DEVICE, {"role": "shoe", "event": "ShuffleDone", "fields": {"card_count": 416}}, 1)
    assert current_payload(old) == {"device_role": "shoe", "event": "SHUFFLE_DONE", "fields": {"card_count": 416}}
    assert old.payload["event"] == "ShuffleDone"  # the entry itself is as stored
    assert current_payload(entry(kinds.INPUT_OPERATOR, {"command": "sit", "args": {}, "role": "dealer"}, 1)) == \
        {"command": "sit", "args": {}, "operator_role": "dealer"}
    assert current_payload(entry(kinds.INPUT_STATUS, {"role": "shoe", "up": False, "reason": "lost"}, 1)) == \
        {"device_role": "shoe", "up": False, "reason": "lost"}
    new = {"device_role": "shoe", "event": "SHUFFLE_DONE", "fields": {}}
    assert current_payload(entry(kinds.INPUT_DEVICE, new, 2)) is new
    cut = {"position": 80, "by": "seat 2", "stack": 416, "role": "?"}
    assert current_payload(entry(kinds.CUT, cut, 1)) is cut


def test_the_doc_gives_each_kind_the_meaning_the_registry_gives() -> None:
    """One wording of what a record means: the registry's, copied in docs/journal.md (a fixed
    wording in one place once stayed wrong in the other)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Record kinds\n", 1)[1].split("\n## ", 1)[0]
    documented = {row.group(1): row.group(2).strip()
                  for row in re.finditer(r"^\| `([a-z_.]+)` \| [^|]* \| (.*) \|$", section, re.M)}
    wrong = {k.name: (documented.get(k.name), k.meaning) for k in kinds.KINDS.values()
             if documented.get(k.name) != k.meaning}
    assert not wrong, "docs/journal.md and kinds.py word these kinds differently: " + repr(wrong)


# The modules that read a table's records by kind (the live views, the readers of the event stream,
# the control server's answer): each compares kinds through the registry's constants, never their
# text, so that a kind renamed in the registry cannot leave one of them silent (an architecture
# review: `run` would have stopped printing round results without a word).
_KIND_READERS = ("controller/cli/run_table.py", "controller/cli/cmd_ctl.py", "controller/cli/cmd_replay.py",
                 "controller/table/display.py", "controller/table/result_line.py", "controller/control/server.py")


@pytest.mark.parametrize("module", _KIND_READERS)
def test_the_readers_of_records_compare_kinds_through_the_registry(module: str) -> None:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    literal = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                items = side.elts if isinstance(side, (ast.Tuple, ast.Set, ast.List)) else [side]
                literal += [f"{module}:{node.lineno}: {i.value}" for i in items
                            if isinstance(i, ast.Constant) and i.value in kinds.KINDS]
    assert literal == []


# The optional keys of the kinds ``shoectl audit decisions`` decides again, as the registry stood when
# schema version 2 began (dffffb6c, 2026-11-30 23:21): every key added since is one an earlier
# program's record lacks.
_OPTIONAL_AT_VERSION_2 = {
    "count_fault": {"cardset", "counted", "device_expected", "expected", "loaded"},
    "refused": {"operator"},
    "round_result": {"banker", "banker_pair", "cards", "cards_used", "dealt", "dragon7", "game", "natural",
                     "outcome", "panda8", "player", "player_pair", "reason"},
}
# Registered later, but written by the table since version 2 began (only the registry lagged).
_WRITTEN_FROM_THE_START = {("round_result", "bonus_in_play")}


def test_every_optional_key_a_decided_kind_gained_since_version_2_began_is_allowed_its_marked_programs() -> None:
    """The audit decides a journal's records again with this program and compares them whole; a key
    added to a kind since version 2 began is missing from an earlier program's records, which must not
    read as forged (a review: ``revealed``'s ``point_count``, ``irregularity``'s ``position``, ``cut_skipped``'s
    ``approval`` and ``round_kind``'s ``wagers_kept`` were left out of ``ADDED_IN_VERSION_2``, and every
    Midibaccarat journal of before the Point Count failed). A key added from here on needs its entry,
    and a mark its programs journal at their start, before it is released."""
    from controller.table.redecision import NOT_DECIDED

    gained = {(name, key) for name, spec in kinds.KINDS.items()
              if name not in NOT_DECIDED and name not in kinds.INPUT_KINDS
              for key in spec.optional if key not in _OPTIONAL_AT_VERSION_2.get(name, set())}
    listed = {(name, key) for name, keys in kinds.ADDED_IN_VERSION_2.items() for key in keys}
    assert gained - _WRITTEN_FROM_THE_START == listed
    assert all(mark in kinds.START_MARKS for keys in kinds.ADDED_IN_VERSION_2.values() for mark in keys.values())
    assert [kinds.started_since(p) for p in ({}, {"signature": None}, {"signature": "sha256:00"},
                                               {"signature": "sha256:00", "driver": None}, {"driver": "automated"})] \
        == [-1, 0, 0, 1, 1]  # a mark named, whatever its value


# The kinds of records the table made when schema version 2 began (dffffb6c).
_KINDS_AT_VERSION_2 = {
    "auth_refused", "bad_request", "burn", "card", "card_deferred", "card_entered", "cardset", "connection_refused",
    "count_fault", "cover", "cover_card", "cover_card_missing", "cut", "cut_declined", "cut_offer", "cut_skipped",
    "dealer", "device_replaced", "discard", "discard_rack", "fault", "fault_cleared", "held_card_used",
    "house_money_added", "input.device", "input.operator", "input.status", "inspection", "irregularity",
    "manual_shuffle", "operator", "reconciliation", "refusals_summary", "refused", "relinquished", "reshuffle_ordered",
    "resumed", "revealed", "round_kind", "round_result", "round_start", "settlement", "shoe_empty", "shoe_loaded",
    "shoe_restarted", "shoe_start", "shuffler_batch_removed", "squeeze", "submission", "wager", "wager_returned"}
# Added since with a decision of their own, which an earlier program made otherwise: its journal is
# one of other rules of play (docs/audit.md), not one an allowance may pass.
_NEW_DECISIONS = {"too_few_cards"}  # a round no longer begun where one was voided (2026-12-05)


def test_every_decided_kind_added_since_version_2_began_is_an_allowance_or_a_new_decision() -> None:
    """A kind the core makes that version 2 did not have at its start is missing from an earlier
    program's journal: either it only says more about a decision made all the same
    (``KINDS_ADDED_IN_VERSION_2``, passed over for the programs before its mark: an upgrade review
    found every early cover card of the first week failing the audit) or it came with another
    decision. A kind added from here on must be put in one of the two."""
    from controller.table.redecision import NOT_DECIDED

    added = {name for name in kinds.KINDS if name not in NOT_DECIDED and name not in kinds.INPUT_KINDS} \
        - _KINDS_AT_VERSION_2
    assert added == set(kinds.KINDS_ADDED_IN_VERSION_2) | _NEW_DECISIONS
    assert all(mark in kinds.START_MARKS for mark in kinds.KINDS_ADDED_IN_VERSION_2.values())
