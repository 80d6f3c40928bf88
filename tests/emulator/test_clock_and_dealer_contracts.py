"""docs/emulator.md figures held as figures (found by mutation testing: the tests compared the code
with its own constants): a pump's waits (clock.py), the dealer's 30 s wait for a stack on its way
and its 2,000-action log."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator import ManualClock
from firmware_bridge.emulator.clock import IDLE_WAIT_S, tick_period, tick_wait
from firmware_bridge.protocol import Display

from .host_support import shuffled_table

INF = float("inf")


def test_a_pump_polls_every_20_ms_at_real_time_and_every_2_ms_at_max() -> None:
    assert tick_period(1.0) == 0.02
    assert tick_period(0.5) == 0.02
    assert tick_period(4.0) == pytest.approx(0.005)
    assert tick_period(INF) == 0.002
    assert tick_period(1000.0) == 0.002


def test_how_long_a_pump_sleeps_by_the_figures() -> None:
    """Until the device's next due, at most a second (an idle device is ticked about once a
    second); a due that is now or past: every poll_s; never past the first held-back frame."""
    assert IDLE_WAIT_S == 1.0
    assert tick_wait(None, 10.0, 0.02) == 1.0
    assert tick_wait(15.0, 10.0, 0.02) == 1.0
    assert tick_wait(10.25, 10.0, 0.02) == pytest.approx(0.25)
    assert tick_wait(10.0, 10.0, 0.02) == 0.02  # due now, still due after the tick: a condition
    assert tick_wait(9.0, 10.0, 0.02) == 0.02
    assert tick_wait(None, 10.0, 0.02, on_the_clock=True) == 0.02
    assert tick_wait(None, 10.0, 0.02, frame_due=10.1) == pytest.approx(0.1)
    assert tick_wait(None, 10.0, 0.02, frame_due=9.5) == 0.0


def test_a_manual_clock_never_goes_backwards() -> None:
    clock = ManualClock(5.0)
    with pytest.raises(ValueError):
        clock.advance(-0.1)
    with pytest.raises(ValueError):
        clock.set(4.0)
    assert clock() == 5.0


def test_a_prompt_waits_30_s_for_a_stack_on_its_way_then_is_refused(clock) -> None:
    """CUT "waits for it, up to 30 s" while the shuffler holds a shuffled stack it was never told to
    deliver; then it is refused ("no stack in hand") and the prompts after it go on."""
    table, _, shoe = shuffled_table(clock)
    shoe.ok(Display("CUT 50"))
    start = clock()
    clock.set(start + 29.9)
    table.tick()
    assert table.dealer.pending_prompts == 1 and not table.dealer.log
    clock.set(start + 30.1)
    table.tick()
    assert table.dealer.pending_prompts == 0
    assert table.dealer.log[-1].ok is False and "no stack in hand" in table.dealer.log[-1].detail
    table.close()


def test_the_dealer_keeps_its_latest_2000_actions() -> None:
    from firmware_bridge.emulator.dealer import LOG_LIMIT

    assert LOG_LIMIT == 2000  # docs/emulator.md: "the latest 2,000 (LOG_LIMIT; ... about 500)"


def test_cover_takes_every_n_from_1_to_the_cards_in_the_stack_and_cut_1_to_one_less() -> None:
    """The dealer's prompts: "CUT needs 1 <= N < stack size, COVER needs 1 <= N <= the cards in
    the stack"."""
    from firmware_bridge.emulator import COVER, cut_stack, insert_second_cover

    from .host_support import cards

    stack = cut_stack(cards("AS 2S 3S 4S"), 1)  # 2S 3S 4S AS COVER
    assert insert_second_cover(stack, 4)[0] is COVER  # all four cards below it
    assert insert_second_cover(stack, 1)[-3:] == [COVER, cards("AS")[0], COVER]
    with pytest.raises(ValueError):
        insert_second_cover(stack, 5)
    with pytest.raises(ValueError):
        insert_second_cover(stack, 0)
    assert cut_stack(cards("AS 2S 3S"), 2)[-1] is COVER
    for n in (0, 3):
        with pytest.raises(ValueError):
            cut_stack(cards("AS 2S 3S"), n)
