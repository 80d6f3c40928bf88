"""When a device disagrees with what the table core knows: the facts the core checks its devices
against, as pure functions (no state, no I/O). The core (``controller.table.core``) acts on them.

- ``replaced_identity(known, serial, epoch)``: the device now in a role is not the one the core
  knew (another serial, or another event epoch: its event counter restarted, so it lost its
  memory, docs/protocol.md E2). Gives the reason, or ``None``.
- ``cards_lost_with(role, state, automatic_shoe)``: whether a device in ``role`` that lost its
  memory in table state ``state`` took the shoe in play with it (the core then gives that shoe up:
  a round in progress is void, 627a.13(e), and the cards are collected and reshuffled,
  681a.7(d)(1)-(2)).
- ``cover_card_due(shoe)``: how many cards leave the shoe before the second cover card must come
  out (681a.5(d)); ``missed_cover_card(shoe)``: a card beyond that left and no cover card did.
- ``load_count_problem(shoe, loaded)``: the shoe reports another number of cards loaded than the
  stack the core prepared (681a.7(a)); ``count_difference(got, want)`` words a count difference.
"""
from __future__ import annotations

from typing import Any

# Table states in which each device holds, or is handing over, the cards of the shoe in play.
# The shoe (and the dealer at it) from the delivery of the shuffled stack for the cut to the
# reshuffle; the shuffler while its delivery for the cut may still be under way, and while it
# loads an automatic shoe. While shuffling nothing is lost: the shuffle is asked for again.
_SHOE_HOLDS = frozenset({"cutting", "ready_to_load", "loading", "burning", "betting", "dealing", "squeeze",
                         "house_money"})
_SHUFFLER_HOLDS = frozenset({"cutting"})


def replaced_identity(known: tuple[str, int] | None, serial: str, epoch: int | None) -> str | None:
    """Why the device reporting ``(serial, epoch)`` is not the ``known`` one, or ``None`` (the
    same device, or nothing to compare: no identity known or reported)."""
    if known is None or epoch is None:
        return None
    old_serial, old_epoch = known
    if serial != old_serial:
        return f"another unit answers (serial {serial}, was {old_serial})"
    if epoch != old_epoch:
        return f"its event counter restarted (event epoch {epoch}, was {old_epoch}): it lost its memory"
    return None


def cards_lost_with(role: str, state: str, automatic_shoe: bool = False) -> bool:
    """Whether the device in ``role`` held the cards of the shoe in play in table state ``state``."""
    if role == "shoe":
        return state in _SHOE_HOLDS
    if role == "shuffler":
        return state in _SHUFFLER_HOLDS or (automatic_shoe and state == "loading")
    return False


def cover_card_due(shoe: Any) -> int | None:
    """The number of cards that leave the shoe before the second cover card, which was placed with
    ``cover_from_bottom`` cards below it; ``None`` when no second cover card was placed (an
    automatic shoe, 681a.5(h)) or the shoe is not loaded yet."""
    if shoe is None or shoe.cover_from_bottom is None or shoe.loaded_count is None:
        return None
    return max(0, shoe.loaded_count - shoe.cover_from_bottom)


def missed_cover_card(shoe: Any) -> bool:
    """True when more cards left the shoe than lie above the cover card and no cover card came
    out: the shoe passed the cover position without it."""
    due = cover_card_due(shoe)
    return due is not None and not shoe.cover_reached and shoe.dealt > due


def count_difference(got: int, want: int) -> str:
    """``"2 cards missing"``, ``"1 extra card"``, or ``""`` when the counts agree."""
    diff = got - want
    if diff < 0:
        return f"{-diff} card{'s' if -diff != 1 else ''} missing"
    return f"{diff} extra card{'s' if diff != 1 else ''}" if diff else ""


def load_count_problem(shoe: Any, loaded: int) -> str | None:
    """What is wrong when the shoe reports ``loaded`` cards for the stack of ``shoe``, or ``None``."""
    if loaded == shoe.stack_size:
        return None
    return f"the shoe reports {loaded} cards loaded, the stack holds {shoe.stack_size}: " \
           f"{count_difference(loaded, shoe.stack_size)}"
