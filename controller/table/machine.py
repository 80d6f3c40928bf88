"""The table's states and transitions, declared as data in one place.

``build_machine(model)`` attaches a ``transitions.Machine`` (queued, auto-transitions off) to the
table core. Guards (``conditions``) and effects (``after``) are methods of the model
(``controller.table.core.TableCore``); an effect never blocks: it only appends outputs.

    closed ──open──▶ shuffling ──shuffle_done──▶ cutting ──cut_complete──▶ ready_to_load
      ▲                 │ count wrong                                         │ load
      │                 ▼                                                     ▼
      │            count_fault ──reshuffle──▶ shuffling                    loading ──loaded──▶ burning
      │                                                                                    │ burned
    close ◀── (betting) ◀──round_over── dealing ◀──no_more_bets── betting ◀────────────────┘
                             │ squeeze / house money sub-states; cover card -> reshuffle
    any live state ──fault──▶ fault ──recovered──▶ (the state it left)
"""
from __future__ import annotations

from typing import Any

from transitions import Machine

STATES = [
    "closed",          # no cards in play
    "inspection",      # 681a.5(g): idle table, cards spread for inspection
    "shuffling",       # 681a.5(a): automated shuffle under way (or the dealer's manual shuffle)
    "count_fault",     # 681a.5(a) + count check: wrong card count, the table stays closed
    "cutting",         # 681a.5(b)-(d): cut offered, cover cards placed
    "ready_to_load",   # 681a.5(e): a floorperson may still order a recut or reshuffle
    "loading",         # 681a.7(a): stack going into the shoe
    "burning",         # 681a.7(c): first card after a load, or a new dealer's burn
    "betting",         # wagers open
    "dealing",         # 629a.8(b) "no more bets" said; cards being dealt
    "squeeze",         # 629a.8(c)(1)-(2),(4)-(5): a hand is with a player (face-down dealing)
    "house_money",     # 629a.8(c)(3): House Money settled before any third card
    "fault",           # device fault or link lost: everything held, resumes where it stopped
]

# Each state as it ends "the table is ..." in what a floorperson reads (a refusal).
STATE_WORDS = {
    "closed": "closed", "inspection": "spread for inspection", "shuffling": "shuffling",
    "count_fault": "in a count fault", "cutting": "cutting", "ready_to_load": "ready to load",
    "loading": "loading", "burning": "burning", "betting": "betting", "dealing": "dealing",
    "squeeze": "at the squeeze", "house_money": "at House Money",
    "fault": "held by a fault",  # with what ends each one: ``faults.held_words``
}


# What moves the table on from each state, said after a refusal for the state (a review: "load is
# not allowed while the table is cutting" said nothing of what comes first). Worded as what the
# table waits for, true whoever asks and whatever the table's devices (a list of the commands the
# state allows named some the table then refused); a fault's words name what ends it already.
STATE_NEXT = {
    "closed": "next, open starts a shoe",
    "inspection": "next, the first player arriving sees the spread cards, then inspection_done ends the inspection",
    "shuffling": "next, the shuffle (the shuffler's; at a table without one, manual_shuffle_done or "
                 "preshuffled_decks)",
    "count_fault": "a count fault ends with order_reshuffle, restart_shoe or close",
    "cutting": "next, the cut (cut; cut_decline for the seat offered it), then the second cover card (cover)",
    "ready_to_load": "next, the stack goes into the shoe (load)",
    "loading": "the table waits for the shoe to take the stack",
    "burning": "the table waits for the burn card from the shoe",
    "betting": "the table takes wagers; no_more_bets starts the round",
    "dealing": "the table waits for the round's cards from the shoe",
    "squeeze": "next, the hand at the squeeze is turned over (reveal, or relinquish)",
    "house_money": "next, continue goes on with the round (after any house_money_add)",
    "fault": "",
}
CUT_MADE_NEXT = "next, the second cover card (cover)"  # cutting, once the cut is made: cut is refused then


def next_step(state: str, *, cut_made: bool = False) -> str:
    """What moves the table on from ``state`` (``STATE_NEXT``; cutting once the cut is made:
    ``CUT_MADE_NEXT``); "" for a fault, whose words name what ends it."""
    return CUT_MADE_NEXT if state == "cutting" and cut_made else STATE_NEXT[state]


def state_words(state: str) -> str:
    """``state`` as it ends "the table is ..." (every state has its words: tests/table/test_refusal_words.py)."""
    return STATE_WORDS[state]

LIVE = ["shuffling", "cutting", "ready_to_load", "loading", "burning", "betting", "dealing", "squeeze", "house_money", "inspection"]

TRANSITIONS: list[dict[str, Any]] = [
    # opening and shuffling (681a.5(a), (h))
    {"trigger": "open", "source": "closed", "dest": "shuffling", "after": "start_shuffle"},
    {"trigger": "shuffle_done", "source": "shuffling", "dest": "count_fault", "unless": "count_ok", "after": "report_count_fault"},
    {"trigger": "shuffle_done", "source": "shuffling", "dest": "loading", "conditions": ["count_ok", "automatic_shoe"], "after": "deliver_to_shoe"},
    {"trigger": "shuffle_done", "source": "shuffling", "dest": "cutting", "conditions": "count_ok", "after": ["deliver_to_dealer", "offer_cut"]},
    {"trigger": "reshuffle", "source": ["count_fault", "ready_to_load", "cutting"], "dest": "shuffling", "after": "start_shuffle"},
    {"trigger": "reshuffle", "source": "betting", "dest": "shuffling", "after": "collect_and_reshuffle"},
    # cut (681a.5(b)-(e))
    {"trigger": "cut_complete", "source": "cutting", "dest": "ready_to_load"},
    {"trigger": "recut", "source": ["cutting", "ready_to_load"], "dest": "cutting", "after": "offer_cut"},
    {"trigger": "load", "source": "ready_to_load", "dest": "loading", "after": "prompt_load"},
    # load and burn (681a.7(a), (c))
    {"trigger": "loaded", "source": "loading", "dest": "count_fault", "unless": "load_count_ok", "after": "report_load_count_fault"},
    {"trigger": "loaded", "source": "loading", "dest": "burning", "after": "prompt_burn"},
    {"trigger": "burned", "source": "burning", "dest": "betting", "after": "open_betting"},
    {"trigger": "new_dealer", "source": "betting", "dest": "burning", "after": "prompt_burn"},
    # a round (629a.8, 681a.7(e)-(l), 627a.13)
    {"trigger": "no_more_bets", "source": "betting", "dest": "dealing", "after": "start_round"},
    {"trigger": "squeeze_start", "source": "dealing", "dest": "squeeze"},
    {"trigger": "squeeze_done", "source": "squeeze", "dest": "dealing", "after": "continue_round"},
    {"trigger": "house_money_start", "source": "dealing", "dest": "house_money"},
    {"trigger": "house_money_done", "source": "house_money", "dest": "dealing", "after": "continue_round"},
    {"trigger": "round_over", "source": ["dealing", "squeeze", "house_money"], "dest": "count_fault", "conditions": ["reshuffle_due", "cardset_bad"], "after": "report_cardset_fault"},
    {"trigger": "round_over", "source": ["dealing", "squeeze", "house_money"], "dest": "shuffling", "conditions": "reshuffle_due", "after": "collect_and_reshuffle"},
    {"trigger": "round_over", "source": ["dealing", "squeeze", "house_money"], "dest": "betting", "after": "open_betting"},
    # idle table (681a.5(g)) and closing
    # (from betting the shoe in play is over: its cards collected and their card set checked first)
    {"trigger": "declare_idle", "source": "betting", "dest": "count_fault", "conditions": "cardset_bad", "after": "report_cardset_fault"},
    {"trigger": "declare_idle", "source": ["betting", "ready_to_load"], "dest": "inspection", "after": "spread_cards"},
    {"trigger": "inspected", "source": "inspection", "dest": "shuffling", "after": "start_shuffle"},
    {"trigger": "close", "source": "betting", "dest": "count_fault", "conditions": "cardset_bad", "after": "report_cardset_fault"},
    {"trigger": "close", "source": ["betting", "count_fault", "ready_to_load", "inspection"], "dest": "closed", "after": "closed_table"},
    # the devices were replaced or restarted without their cards: a new shoe (also once the faults
    # that held the table have cleared, when the device that lost the cards came back)
    {"trigger": "restart", "source": LIVE + ["count_fault", "fault"], "dest": "shuffling", "after": "collect_and_reshuffle"},
    # faults: held where they happened, resumed exactly there
    {"trigger": "fault", "source": LIVE, "dest": "fault", "before": "remember_state"},
    # (one resume_<state> per live state, generated below)
]


TRANSITIONS += [{"trigger": f"resume_{state}", "source": "fault", "dest": state, "after": "resumed"} for state in LIVE]

LIVE_SET = frozenset(LIVE)
# States in which the shoe holds a cut, loaded stack and its gate is open for dealing.
GATE_OPEN_STATES = frozenset({"burning", "betting", "dealing", "squeeze", "house_money"})
# States in which the shuffled stack is on its way from the shuffler into the shoe.
AWAITING_STACK = frozenset({"cutting", "ready_to_load", "loading"})
# States in which wagers are open or a round is dealt (an order to reshuffle there takes effect
# after the round).
ROUND_STATES = ("betting", "dealing", "squeeze", "house_money")


def build_machine(model: Any, initial: str = "closed") -> Machine:
    return Machine(
        model=model,
        states=STATES,
        transitions=TRANSITIONS,
        initial=initial,
        queued=True,
        auto_transitions=False,
        ignore_invalid_triggers=False,
    )
