"""The journal's vocabulary: every kind of record a table writes, with a one-line meaning and its
payload keys (schema version 2). docs/journal.md ("Record kinds") lists the same kinds and keys,
and tests/journal/test_kinds.py checks the two against each other, against the kinds spelled in
the code and against the records of a real run.

The store itself stays generic (it stores any kind it is given); this registry is the contract of
what a table journals, for its writers (``controller.table``, ``controller.control``) and its
readers (replay, the audit, recovery, the floor feed). Writers and readers use the constants
below, never the literal text. A record's payload holds every key of ``Kind.keys`` and may hold
those of ``Kind.optional``, nothing else; ``payload_problem`` says when it does not.

What schema version 1 spelled differently (device events by class name, ``role``) is read through
``controller.journal.vocabulary``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Kind:
    """One kind of record: its name, what it means, the payload keys it always has (``keys``)
    and those it may have (``optional``)."""

    name: str
    meaning: str
    keys: tuple[str, ...]
    optional: tuple[str, ...] = ()

    @property
    def allowed(self) -> frozenset[str]:
        return frozenset(self.keys) | frozenset(self.optional)


# -- inputs: what came into the table, journaled before the table acts on it -----------------------
INPUT_DEVICE = "input.device"
INPUT_OPERATOR = "input.operator"
INPUT_STATUS = "input.status"
INPUT_COMMAND_FAILED = "input.command_failed"

# -- the table's decisions: shoe ----------------------------------------------------------------------
SHOE_START = "shoe_start"
SUBMISSION = "submission"
COUNT_FAULT = "count_fault"
CUT_OFFER = "cut_offer"
CUT_DECLINED = "cut_declined"
CUT = "cut"
CUT_SKIPPED = "cut_skipped"
COVER = "cover"
INSPECTION = "inspection"
SHUFFLER_BATCH_REMOVED = "shuffler_batch_removed"
MANUAL_SHUFFLE = "manual_shuffle"
SHOE_LOADED = "shoe_loaded"
BURN = "burn"
COVER_CARD = "cover_card"
COVER_CARD_MISSING = "cover_card_missing"
COVER_CARD_EARLY = "cover_card_early"
TOO_FEW_CARDS = "too_few_cards"
SHOE_EMPTY = "shoe_empty"
RESHUFFLE_ORDERED = "reshuffle_ordered"
SHOE_RESTARTED = "shoe_restarted"
RECONCILIATION = "reconciliation"
CARDSET = "cardset"

# -- rounds ---------------------------------------------------------------------------------------------
WAGER = "wager"
ROUND_START = "round_start"
CARD = "card"
CARD_DEFERRED = "card_deferred"
HELD_CARD_USED = "held_card_used"
CARD_ENTERED = "card_entered"
DISCARD = "discard"
IRREGULARITY = "irregularity"
SQUEEZE = "squeeze"
RELINQUISHED = "relinquished"
REVEALED = "revealed"
HOUSE_MONEY_ADDED = "house_money_added"
ROUND_KIND = "round_kind"
SETTLEMENT = "settlement"
WAGER_RETURNED = "wager_returned"
ROUND_RESULT = "round_result"
DISCARD_RACK = "discard_rack"

# -- people, devices and faults ------------------------------------------------------------------------
OPERATOR = "operator"
REFUSED = "refused"
DEALER = "dealer"
DEVICE_REPLACED = "device_replaced"
FAULT = "fault"
FAULT_CLEARED = "fault_cleared"
EVENTS_GIVEN_UP = "events_given_up"
RESUMED = "resumed"
CONTROLLER_STARTED = "controller_started"
CLOCK_STEP = "clock_step"

# -- surveillance: the live edge monitor (controller.table.edge_monitor, docs/edge-monitor.md) ----------
EDGE = "edge"
EDGE_ALERT = "edge_alert"

# -- refusals at the control socket, before the table saw them (controller.control) --------------------
CONNECTION_REFUSED = "connection_refused"
BAD_REQUEST = "bad_request"
AUTH_REFUSED = "auth_refused"
REFUSALS_SUMMARY = "refusals_summary"

_SETTLEMENT_KEYS = ("seat", "kind", "amount", "result", "win", "commission", "net")
_HAND_RESULT_KEYS = ("game", "player", "banker", "outcome", "natural", "cards_used", "dealt", "player_pair",
                     "banker_pair", "dragon7", "panda8")

KINDS: Mapping[str, Kind] = {k.name: k for k in (
    Kind(INPUT_DEVICE, "a device event (columns: device_serial, device_epoch, device_counter); fields as in "
         "docs/protocol.md, enums as numbers", ("device_role", "event", "fields")),
    Kind(INPUT_OPERATOR, "an operator command as given (column: operator)", ("command", "args", "operator_role")),
    Kind(INPUT_STATUS, "a device link came up (with the identity of the device now in that role) or went down; "
         "`stalled: true`: the link holds the device's events behind some that never came (the fault "
         "`events:<role>`, docs/irregularities.md); `stall_ended: true`: it delivers them again (the fault ends)",
         ("device_role", "up", "reason"), ("serial", "epoch", "stalled", "stall_ended")),
    Kind(INPUT_COMMAND_FAILED, "a command to a device did not go through: refused (a NAK, its code's name in "
         "code) or its outcome unknown; resent (true): a restart sent it again, not knowing whether the device "
         "had it before; prompt: the text a DISPLAY was to show; answered (true): its outcome is unknown though "
         "the link stayed up (a reply not the command's, or unreadable)", ("device_role", "command", "reason", "refused"),
         ("code", "resent", "prompt", "answered")),

    Kind(SHOE_START, "a new shoe: its id and decks; the shuffle is ordered", ("shoe", "decks")),
    Kind(SUBMISSION, "the Rules Submission set at opening, whole (as its TOML file's layout)",
         ("source", "submission", "wagers", "paytable", "commission"),
         ("house_money", "twentyone", "bonus_paytable", "irregularities")),
    Kind(COUNT_FAULT, "the cards counted (after the shuffle, at loading, or in the card set) are not what the "
         "shoe must hold: the table stays closed; collected_from: the shoe whose collected cards were counted (a "
         "card missing went missing there)", ("problem",),
         ("counted", "expected", "device_expected", "loaded", "cardset", "collected_from")),
    Kind(CUT_OFFER, "the order in which the seats are offered the cut (681a.5(b)); again, from the "
         "seat offered it now, when a player sitting down is added (joined: that seat)",
         ("order",), ("joined",)),
    Kind(CUT_DECLINED, "a seat declined the cut", ("seat",)),
    Kind(CUT, "the cut: position from the top, by whom, of a stack of how many cards", ("position", "by", "stack")),
    Kind(CUT_SKIPPED, "no cut: an automatic reshuffling shoe (681a.5(h)); approval: the Bureau's approval of the "
         "device as its profile records it (461a.4)", ("clause",), ("approval",)),
    Kind(COVER, "the second cover card, this many cards above the bottom (681a.5(d))", ("from_bottom",)),
    Kind(INSPECTION, "an idle table's cards spread for a player's inspection before they are shuffled again, "
         "by hand or in the shuffler (681a.5(g)); clause (g)(2) for a batch taken out of the shuffler; again with turned "
         "when the spread cards are turned face up at a player's request", ("clause", "face_up"), ("turned",)),
    Kind(SHUFFLER_BATCH_REMOVED, "the batch already in the shuffler taken out once the inspected cards are put in "
         "(681a.5(g)(2))", ("clause",)),
    Kind(MANUAL_SHUFFLE, "a manual shuffle done (washed first or not), by the dealer", ("washed", "dealer")),
    Kind(SHOE_LOADED, "the shoe reports the cards loaded", ("cards",)),
    Kind(BURN, "a card burned (position in the stack as loaded); due: the burns still owed after it, when the "
         "Rules Submission burns more than one", ("card", "position", "dealer"), ("due",)),
    Kind(COVER_CARD, "the cover card came out", ("position", "during_round")),
    Kind(COVER_CARD_MISSING, "more cards came out than the cover card's place allows, and no cover card "
         "(681a.7(d))", ("expected_after", "cards_out", "clause")),
    Kind(COVER_CARD_EARLY, "a cover card came out before the place the second cover card was put at: the stack "
         "in the shoe is not as its cut and cover were recorded (681a.5(d))", ("expected_after", "cards_out", "clause")),
    Kind(TOO_FEW_CARDS, "fewer cards are left in the shoe than a round needs (each hand's first two): no round "
         "is begun, the shoe ends there as at its cover card (627a.13(e))", ("cards_left", "needed", "clause")),
    Kind(SHOE_EMPTY, "the shoe is empty although cards counted in it never came out", ("cards_counted_in_shoe",)),
    Kind(RESHUFFLE_ORDERED, "a reshuffle ordered by a floorperson", ("by",)),
    Kind(SHOE_RESTARTED, "the shoe in play given up and a new one started", ("reason",)),
    Kind(RECONCILIATION, "the shoe's cards reconciled when it ends: ok when the load count held and no card was "
         "read extra, foreign or twice; the cards left in it were never read (remaining_in_shoe: loaded less "
         "left_shoe) and are counted with the whole set by remaining_counted_by (shuffler: after the next "
         "shuffle; shoe: at the next load), where a card missing is a count_fault with collected_from",
         ("loaded", "left_shoe", "burned", "remaining_in_shoe", "total", "expected", "ok"), ("remaining_counted_by",)),
    Kind(CARDSET, "the card-set verification of the ended shoe (controller.audit.cardset)", (
        "shoe", "ok", "expected", "loaded", "read", "identified", "unreadable", "unread", "extra", "foreign",
        "reused_positions", "missing", "missing_count", "surplus", "unaccounted", "not_seen", "problems")),

    Kind(WAGER, "a wager placed", ("seat", "kind", "amount")),
    Kind(ROUND_START, "a round begins with these wagers; kind normal or simulated", ("round", "kind", "wagers")),
    Kind(CARD, "a card dealt to a hand (position in the stack; n: the round's nth card)",
         ("card", "to", "position", "n")),
    Kind(CARD_DEFERRED, "a card that left the shoe while the table was held in a fault, or while a round that needs "
         "it waited at the squeeze or for House Money, applied in order when the fault clears or the round goes on",
         ("card", "position")),
    Kind(HELD_CARD_USED, "a card set aside dealt as the round's first: held (627a.13(a)/(b)) or opening a "
         "simulated round (627a.13(c)(2)/(d)); clause says which", ("card", "clause")),
    Kind(CARD_ENTERED, "a card entered by hand for one the shoe could not read", ("card", "by")),
    Kind(DISCARD, "a card out of the shoe to the discard rack, dealt to no hand (627a.13(c)(1); a card drawn in "
         "error with no other place; a set-aside card when the shoe ends; a card out of a shoe after it ended); reason "
         "says why; card null for one never read; disclosed (a card out after its shoe ended): it came out face up",
         ("card", "position", "reason"), ("disclosed",)),
    Kind(IRREGULARITY, "a dealing irregularity and the table's decision (627a.13); position: the card's in the stack",
         ("action", "clause", "card", "reason"), ("position",)),
    Kind(SQUEEZE, "a hand given to a seat to squeeze (Midibaccarat)", ("hand", "seat")),
    Kind(RELINQUISHED, "the squeeze passed from a seat to another", ("seat", "to", "hand")),
    Kind(REVEALED, "a squeezed hand revealed, by whom; point_count: its Point Count then, which the dealer "
         "announces (629a.8(c)(1)-(2); not at 21 Baccarat)", ("hand", "by"), ("point_count",)),
    Kind(HOUSE_MONEY_ADDED, "a House Money wager added", ("seat", "side", "amount")),
    Kind(ROUND_KIND, "the round's kind changed (simulated: 627a.13(d)); wagers_kept: its wagers put back on the "
         "layout for the next round (Rules Submission simulated_round_wagers = stay)", ("kind", "clause"),
         ("wagers_kept",)),
    Kind(SETTLEMENT, "a wager settled (minor units; net to the player); a void round settles each of its "
         "wagers as a push", _SETTLEMENT_KEYS),
    Kind(WAGER_RETURNED, "a wager taken off the layout and returned, never dealt on: taken back (take_back), or "
         "no round can take it (its shoe lost, emptied or ended; a simulated round under a Rules Submission "
         "that returns the layout's wagers)", _SETTLEMENT_KEYS),
    Kind(ROUND_RESULT, "a round's outcome: the hands and the cards as dealt; a void round its reason and cards; "
         "21 Baccarat whether the Bonus cards were in play (bonus_in_play) and each hand's (bonus_cards, bonus_rank)",
         ("round", "kind"), (*_HAND_RESULT_KEYS, "bonus_in_play", "reason", "cards")),
    Kind(DISCARD_RACK, "the round's cards to the discard rack, in an order that rebuilds each hand (681a.7(l))",
         ("cards",)),

    Kind(OPERATOR, "an operator command the table accepted (before it acts on it); the operator in the column too "
         "(since 2026-12-06)",
         ("command", "args", "operator", "operator_role", "state")),
    Kind(REFUSED, "an input the table refused; nothing changed; an operator's in the column too (since 2026-12-06)",
         ("input", "reason", "state"), ("operator",)),
    Kind(DEALER, "the dealer at the table", ("dealer",)),
    Kind(DEVICE_REPLACED, "a device came back as another (serial or event epoch): what it held is lost",
         ("device_role", "serial", "epoch", "reason", "state", "shoe_lost")),
    Kind(FAULT, "a fault that stops play", ("fault", "reason")),
    Kind(FAULT_CLEARED, "faults cleared, by whom or what", ("faults", "by")),
    Kind(EVENTS_GIVEN_UP, "events a device never sent again, given up when a floorperson cleared events:<role> "
         "(protocol E7): its counters first to last of its event epoch", ("device_role", "device_serial", "epoch",
                                                                         "first", "last")),
    Kind(RESUMED, "play resumed after a fault", ("state",)),
    Kind(CONTROLLER_STARTED, "the controller started on this journal: its version, how many journaled inputs "
         "it replayed (more than 0: a restart) and the state it goes on from; capabilities: what its devices are "
         "(automatic_shoe, approval, shuffler, shuffler_keeps_one_batch, shuffler_in_shoe, deck_capacity: the most "
         "decks every one holds, null when not known), by which the table decides; signature: the program's (shoectl signature: one SHA-256 over all its files); driver: who drives the table from here (automated: the automated dealer and floorperson; operators)",
         ("version", "replayed", "state"), ("capabilities", "signature", "driver")),
    Kind(CLOCK_STEP, "the wall clock that stamps every entry stepped (controller.journal.clockwatch), found by the "
         "journal's writer before the entry after this one: step_ms (negative: back) from expected, the time it "
         "should have given; basis steady_clock: measured against the steady clock since the previous transaction; "
         "last_entry: at a writer's start, the clock is behind the last entry's time (at least that far back, or the entries "
         "before were stamped ahead)",
         ("step_ms", "expected", "basis")),

    Kind(EDGE, "after a round, every wager the Rules Submission (its source) offers, valued exactly on the cards "
         "left in the shoe (those below the cover card included: unseen); wagers: kind -> ev, the expected value "
         "per unit for the player as an exact fraction, and edge, the same as a decimal: positive is the player's "
         "advantage; threshold: the monitor's, above which it journals an edge_alert after this record (since "
         "2026-12-06)", ("round", "submission", "cards_out", "remaining", "remaining_ranks", "wagers"), ("threshold",)),
    Kind(EDGE_ALERT, "a surveillance notice: each wager's player edge in wagers (kind -> decimal) is above the "
         "configured threshold after the round", ("round", "wagers", "threshold")),

    Kind(CONNECTION_REFUSED, "a control connection refused: the table is busy", ("code", "reason")),
    Kind(BAD_REQUEST, "a malformed control request; a command's, once its operator logged in, with the command "
         "and the operator", ("code", "reason"), ("command", "operator")),
    Kind(AUTH_REFUSED, "a control command refused at login or for the operator's role; account: the system "
         "account that connected", ("command", "operator", "code", "reason"), ("account",)),
    Kind(REFUSALS_SUMMARY, "control refusals counted but not journaled one by one (a flood)",
         ("not_journaled", "by_code", "operators")),
)}

INPUT_KINDS: tuple[str, ...] = (INPUT_DEVICE, INPUT_OPERATOR, INPUT_STATUS, INPUT_COMMAND_FAILED)

#: The keys of ``controller_started`` that the programs journal from a day on, oldest first: a
#: ``signature`` since 2026-12-06 12:06, a ``driver`` since 2026-12-07 10:41 (``started_since``).
START_MARKS: tuple[str, ...] = ("signature", "driver")

#: Optional keys added to records of schema version 2 after it began (each among its kind's
#: ``optional``), kind -> key -> the first of ``START_MARKS`` that every program writing the key
#: journals at its start: the same record written by an earlier program lacks the key. ``shoectl
#: audit decisions`` compares a record without it under starts that name neither that mark nor a
#: later one (``controller.table.earlier_programs``; docs/journal.md, "Record kinds"). Found by reading
#: the registry at each commit that changed it (a review: four keys were missing here).
ADDED_IN_VERSION_2: Mapping[str, Mapping[str, str]] = {
    ROUND_KIND: {"wagers_kept": "signature"},                # 2026-11-30
    IRREGULARITY: {"position": "signature"},                 # 2026-12-01
    RECONCILIATION: {"remaining_counted_by": "signature"},   # 2026-12-05
    COUNT_FAULT: {"collected_from": "signature"},            # 2026-12-05
    CUT_OFFER: {"joined": "signature"},                      # 2026-12-05
    INSPECTION: {"turned": "signature"},                     # 2026-12-05
    BURN: {"due": "signature"},                              # 2026-12-05
    CUT_SKIPPED: {"approval": "signature"},                  # 2026-12-05
    REVEALED: {"point_count": "signature"},                  # 2026-12-06 08:09
    DISCARD: {"disclosed": "driver"}}                        # 2026-12-07 10:01

#: Record kinds added to schema version 2 after it began that say more about a decision an earlier
#: program made all the same (its other records as now), by the mark of the programs that write
#: them (as ``ADDED_IN_VERSION_2``). ``too_few_cards`` (2026-12-05) is not one: it came with
#: another decision (a round no longer begun, where one was voided).
KINDS_ADDED_IN_VERSION_2: Mapping[str, str] = {COVER_CARD_EARLY: "signature"}  # 2026-12-05 20:29

#: Kinds whose records of a card dealt in error after a round's end were journaled with no round
#: until 2026-12-05 21:25 (now with the round they follow, 627a.13(b)-(c)), by mark as above.
ROUND_ADDED_IN_VERSION_2: Mapping[str, str] = {IRREGULARITY: "signature", DISCARD: "signature"}

#: Kinds whose ``reason`` is words alone: the record's other keys (an irregularity's action, clause,
#: card and position) are the decision, and an earlier program's words for it were mended since.
#: Every other kind's reason says something the rest does not (a void round's cause, a floorperson's
#: words, a fault's card, a discard's rule): only an earlier program's known words for the same
#: pass there (``controller.table.earlier_programs.EARLIER_WORDS``).
REASON_IS_WORDS: frozenset[str] = frozenset({IRREGULARITY})


def started_since(payload: Mapping[str, Any]) -> int:
    """The index in ``START_MARKS`` of the latest mark a ``controller_started`` payload names, -1
    for none (a program of before 2026-12-06)."""
    if "driver" in payload:  # null too: the table's own operators drive it
        return START_MARKS.index("driver")
    return START_MARKS.index("signature") if "signature" in payload else -1  # whatever its value


def payload_problem(kind: str, payload: Mapping[str, Any]) -> str | None:
    """Why ``payload`` is not what a ``kind`` record holds (an unknown kind, a key missing or not
    of its kind), or None when it is."""
    spec = KINDS.get(kind)
    if spec is None:
        return f"unknown record kind {kind!r}"
    missing = [k for k in spec.keys if k not in payload]
    if missing:
        return f"{kind}: payload without {', '.join(missing)}"
    extra = sorted(set(payload) - spec.allowed)
    if extra:
        return f"{kind}: payload keys {', '.join(extra)} are not in the registry"
    return None
