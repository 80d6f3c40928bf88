"""``ShoeRounds`` alone: rounds numbered from one in each shoe, a simulated round begun once and
then normal ones again, and the last round decided followed once (a card after it is read as
its irregularity only until then, 627a.13(b)-(c))."""
from __future__ import annotations

from types import SimpleNamespace

from controller.table.round import ShoeRounds


def test_rounds_are_numbered_per_shoe_and_a_simulated_one_is_begun_once() -> None:
    s = ShoeRounds()
    assert s.begin() == (1, "normal")
    s.next_simulated()
    assert s.begin() == (2, "simulated") and s.begin() == (3, "normal")
    s.new_shoe()
    assert s.begin() == (1, "normal") and s.last_outcome is None


def test_the_last_round_decided_is_followed_once() -> None:
    s = ShoeRounds()
    decided = SimpleNamespace(result=SimpleNamespace(outcome=SimpleNamespace(value="banker")))
    s.decided(decided, [])
    assert s.last_outcome == "banker"
    assert s.take_last() is decided and s.take_last() is None
    assert s.last_outcome == "banker"  # the shoe's last result stays shown
    s.decided(decided, [])
    s.begin()  # a new round follows it
    assert s.take_last() is None


def test_a_wager_placed_since_the_last_round_is_told_from_one_kept_through_it() -> None:
    """A card after a round may be its Player's unauthorised third card only while no wager for
    the next round was placed since (627a.13(b)-(c)); wagers kept through a simulated round were
    placed before it, and are not such a wager."""
    s = ShoeRounds()
    decided = SimpleNamespace(result=SimpleNamespace(outcome=SimpleNamespace(value="tie")))
    kept = [object(), object()]
    s.decided(decided, kept)
    assert not s.wager_placed_since(list(kept))
    assert s.wager_placed_since([*kept, object()])  # one more placed
    assert s.wager_placed_since(kept[:1])  # one taken back
    assert s.wager_placed_since([kept[0], object()])  # one taken back and another placed


def test_a_wager_placed_and_taken_back_leaves_the_layout_as_the_round_left_it() -> None:
    """docs/irregularities.md: what counts is the layout when the card comes out; a wager placed
    and taken back before it leaves the layout as the round left it (the card is still the
    round's third card, 627a.13(b)-(c)), and a kept wager taken back changes it."""
    s = ShoeRounds()
    decided = SimpleNamespace(result=SimpleNamespace(outcome=SimpleNamespace(value="player")))
    s.decided(decided, [])
    placed = [object()]
    assert s.wager_placed_since(placed)
    assert not s.wager_placed_since(placed[:0])  # and taken back: the layout is as the round left it
