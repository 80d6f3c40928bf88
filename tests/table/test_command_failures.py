"""A command a device did not carry out is an input the core decides on (journaled first, so a
restart decides the same): refused (a NAK) holds the table in a fault a floorperson clears, after
which the resume sends again what the state needs (a refused prompt: test_refused_prompts.py). A
refusal while a fault already holds the table, or a command whose outcome is unknown (the link
went down), is only said."""
from __future__ import annotations

import pytest

from bench import Bench, refusing, sent

from controller.journal import kinds
from controller.roles import Role
from controller.table.io import CommandFailed, SendCommand
from controller.table.journaling import command_failed_record, input_from
from firmware_bridge.protocol import messages as m


def opened_without_answer() -> Bench:
    """A table that asked the shuffler to shuffle and has not heard back."""
    b = Bench()
    b.base = None
    b._device_acts = lambda o: None  # the scripted devices stay silent
    b.op("open")
    assert b.core.state == "shuffling"
    return b


def test_a_refused_shuffle_holds_the_table_until_a_floorperson_clears_it_then_asks_again() -> None:
    b = opened_without_answer()
    b.feed(CommandFailed("shuffler", "SHUFFLE", "SHUFFLE refused: BUSY", refused=True))
    assert b.core.state == "fault" and "command:shuffler" in b.core.faults
    assert "did not carry out SHUFFLE" in b.of("fault")[-1]["reason"]
    b.op("wager", Role.DEALER, seat=1, kind="banker", amount=100)
    assert b.of("refused")[-1]["input"] == "wager"
    outs = b.op("clear_fault", key="command:shuffler")
    assert b.core.state == "shuffling"
    assert sent(outs, m.Shuffle)


def test_an_unknown_outcome_a_stale_refused_prompt_and_a_refusal_during_a_fault_are_only_said() -> None:
    b = opened_without_answer()
    for failure in (CommandFailed("shuffler", "SHUFFLE", "no reply", refused=False),
                    CommandFailed("shoe", "DISPLAY", "DISPLAY refused: BUSY", refused=True, prompt="CLOSED")):
        outs = b.feed(failure)
        assert b.core.state == "shuffling" and not b.core.faults
        assert [o.text for o in outs if hasattr(o, "text")] and not [o for o in outs if hasattr(o, "kind")]
    b.feed(CommandFailed("shuffler", "SHUFFLE", "SHUFFLE refused: BUSY", refused=True))
    assert list(b.core.faults) == ["command:shuffler"]
    b.feed(CommandFailed("shoe", "GATE_UNLOCK", "GATE_UNLOCK refused: DOOR_OPEN", refused=True))
    assert list(b.core.faults) == ["command:shuffler"]


@pytest.mark.parametrize(("reason", "said"), [
    ("emulated-shoe: DISPLAY: read failed: /dev/x: closed at the device's end before the reply; outcome unknown "
     "(not resent)", "read failed: /dev/x: closed at the device's end before the reply; outcome unknown (not resent)"),
    ("emulated-shoe: link is down (read failed: /dev/x: closed at the device's end); DISPLAY not sent",
     "link is down (read failed: /dev/x: closed at the device's end); DISPLAY not sent"),
    ("EMU-emulated-shoe: DISPLAY got no reply after 4 attempt(s); outcome unknown",
     "got no reply after 4 attempt(s); outcome unknown"),
    ("DISPLAY refused: BUSY", "refused: BUSY"),
])
def test_a_failure_is_said_without_the_device_and_command_the_link_put_first(reason: str, said: str) -> None:
    """The floor reads "the shoe did not carry out DISPLAY: read failed: ...", not the link's
    "emulated-shoe: DISPLAY: " again; the journaled input keeps the link's words."""
    b = opened_without_answer()
    outs = b.feed(CommandFailed("shoe", "DISPLAY", reason, refused=reason.endswith("BUSY"), code="BUSY"))
    assert [o.text for o in outs if hasattr(o, "text")] == [f"the shoe did not carry out DISPLAY: {said}"]
    assert b.inputs[-1].reason == reason  # the input as journaled


@pytest.mark.parametrize("failure", [
    CommandFailed("shoe", "GATE_UNLOCK", "GATE_UNLOCK refused: WRONG_STATE", refused=True),
    CommandFailed("shoe", "DISPLAY", "DISPLAY: protocol violation in the reply", refused=False, prompt="DRAW @3",
                  answered=True)])
def test_a_failed_command_is_journaled_as_an_input_and_read_back_the_same(failure: CommandFailed) -> None:
    record = command_failed_record(failure, "T1-S0001", 3)
    assert record.kind == kinds.INPUT_COMMAND_FAILED and kinds.INPUT_COMMAND_FAILED in kinds.INPUT_KINDS
    assert kinds.payload_problem(record.kind, record.payload) is None
    assert ("answered" in record.payload) == failure.answered  # only when set: older records read the same

    class Stored:  # what the journal gives back for the record
        kind, payload, schema_version, seq = record.kind, record.payload, 2, 1

    assert input_from(Stored()) == failure


def loading_after_a_lost_delivery() -> Bench:
    """A table whose DELIVER(DEALER) got no reply (the shuffler's link dropped while it was sent),
    then cut, covered and told to load by the dealer at the console: the shoe never reports the
    load, since the dealer never had the stack."""
    b = Bench(auto_deal=False)
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.op("open")
    assert b.core.state == "cutting" and sent(b.sent, m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]
    outs = b.feed(CommandFailed("shuffler", "DELIVER", "link lost while sending", refused=False))
    assert not b.core.faults and [o.text for o in outs if hasattr(o, "text")]  # said, not a fault
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)
    assert b.core.state == "loading"
    return b


def test_a_delivery_that_got_no_reply_is_sent_again_by_every_resume_until_the_stack_is_loaded() -> None:
    """The table waited in loading for ever: the stack was still in the shuffler and no resume
    sent DELIVER again once the cut was recorded (a CI run: a line unplugged every 250 ms)."""
    b = loading_after_a_lost_delivery()
    for _ in range(2):
        b.link("shuffler", False)
        outs = b.link("shuffler", True, serial="SH-1", epoch=1)
        assert b.core.state == "loading"
        assert sent(outs, m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]
    assert sent(b.core.resume_outputs(), m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]  # a restart too
    b.event("shoe", m.ShoeLoaded(len(b.stack)))
    assert b.core.state != "loading" and sent(b.core.resume_outputs(), m.Deliver) == []


def test_a_delivery_sent_again_and_refused_as_wrong_state_went_through_the_first_time() -> None:
    """Nothing left to deliver: the DELIVER that got no reply had gone through. Said, not a fault,
    and the resumes stop sending it; without a delivery in doubt the same refusal is a fault."""
    b = loading_after_a_lost_delivery()
    refusal = CommandFailed("shuffler", "DELIVER", "DELIVER refused: WRONG_STATE: nothing shuffled", refused=True,
                            code="WRONG_STATE")
    outs = b.feed(refusal)
    assert not b.core.faults and b.core.state == "loading"
    assert any("already taken a DELIVER" in o.text for o in outs if hasattr(o, "text"))
    assert sent(b.core.resume_outputs(), m.Deliver) == []
    b.feed(refusal)
    assert list(b.core.faults) == ["command:shuffler"]


def test_a_fault_before_the_cut_resumes_without_delivering_the_stack_again() -> None:
    """The shuffler delivered the stack to the dealer; the shoe's link drops and comes back
    before the cut. The resume sent DELIVER again, the shuffler (nothing left to deliver) refused
    it, and the refusal held the table in a fault that every clearing raised again (each clearing
    resumed and sent it once more). A fault's resume sends again only a DELIVER that did not go
    through; a restart still delivers a stack not yet cut (its DELIVER may have died with the
    process)."""
    b = Bench(auto_deal=False)
    b.op("open")
    assert b.core.state == "cutting" and sent(b.sent, m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]
    before = len(b.sent)
    b.link("shoe", False)
    assert b.core.state == "fault"
    b.link("shoe", True)
    assert b.core.state == "cutting" and not b.core.faults
    assert sent(b.sent[before:], m.Deliver) == []
    assert sent(b.core.resume_outputs(restart=True), m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]
    b.op("cut", Role.DEALER, position=100)
    assert b.core.state == "cutting" and b.core.shoe.cut_position is not None


def test_a_delivery_sent_again_and_refused_busy_is_no_fault_and_stays_due() -> None:
    """A resume sent the DELIVER again; BUSY: the shuffler is delivering the one sent before (or
    shuffling one asked for again). Nothing for a floorperson to do: said at info, and DELIVER is
    sent again (the shuffle's SHUFFLE_DONE, the next resume) until the shuffler takes it or says
    it has nothing left (WRONG_STATE)."""
    b = loading_after_a_lost_delivery()
    b.link("shuffler", False)
    assert sent(b.link("shuffler", True, serial="SH-1", epoch=1), m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]
    b.feed(CommandFailed("shuffler", "DELIVER", "Deliver refused: BUSY", refused=True, code="BUSY"))
    assert not b.core.faults and sent(b.core.resume_outputs(), m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]


@pytest.mark.parametrize("automatic_shoe", [False, True])
def test_the_only_shuffle_or_delivery_refused_busy_holds_the_table_and_its_clearing_sends_it_again(
        automatic_shoe: bool) -> None:
    """BUSY for a SHUFFLE or a DELIVER sent once: the device did not do it, and no earlier one is
    under way whose end would move the table on. Said as "still shuffling" or "sent again when it
    is done", it left the table waiting for ever (emulator fault ``refuse-command``). It is a
    fault, as any refusal; its clearing sends it again, and the table goes on."""
    b = Bench(automatic_shoe=automatic_shoe)
    busy = {"SHUFFLE", "DELIVER"}

    def first_of_each(o: SendCommand) -> bool:
        name = m.wire_name(o.message)
        if name not in busy:
            return False
        busy.discard(name)
        return True

    refusals, _ = refusing(b, first_of_each)
    b.op("open")
    b.feed(refusals.pop())
    assert list(b.core.faults) == ["command:shuffler"] and b.core.saved_state == "shuffling"
    b.op("clear_fault", key="command:shuffler")  # the SHUFFLE sent again, then its stack's DELIVER, refused
    b.feed(refusals.pop())
    assert list(b.core.faults) == ["command:shuffler"] and "DELIVER" in b.of("fault")[-1]["reason"]
    b.op("clear_fault", key="command:shuffler")  # the DELIVER sent again
    assert not b.core.faults and b.core.state == ("betting" if automatic_shoe else "cutting")
    replayed = Bench(automatic_shoe=automatic_shoe)
    replayed.core.recover(b.inputs)  # a restart decides the same: the counts come from the inputs alone
    assert replayed.core.snapshot() == b.core.snapshot()
    assert (replayed.core.shoe.shuffles_out, replayed.core.shoe.deliveries_out) == (
        b.core.shoe.shuffles_out, b.core.shoe.deliveries_out)


def test_after_a_restart_during_the_shuffle_a_busy_delivery_is_the_shuffler_at_the_restarts_shuffle() -> None:
    """The controller stopped while the shuffler shuffled; the shuffle ended meanwhile and the
    restart's SHUFFLE was taken: the first one's report sends the DELIVER, which the shuffler,
    shuffling again, refuses BUSY. That is no fault (the restart's shuffle ends, and its report
    sends the DELIVER again): once the controller started again while a stack was prepared, any
    of its commands may be out. A replay that is told where the start fell (as
    ``recovery.replay`` is, from the ``controller_started`` record) decides the same."""
    from controller.table.recovery import JournalInputs, replay

    b = opened_without_answer()
    live = Bench()
    live.base = None
    live.core.recover(b.inputs)
    live.core.restarted()  # the runner, as it journals controller_started
    assert sent(live.core.resume_outputs(restart=True), m.Shuffle) == [m.Shuffle(8)]
    live._device_acts = lambda o: None
    live.inputs = []
    live.event("shuffler", m.ShuffleDone(416, 416))  # the first shuffle's report: DELIVER sent
    live.feed(CommandFailed("shuffler", "DELIVER", "DELIVER refused: BUSY", refused=True, code="BUSY"))
    assert not live.core.faults and live.core.state == "cutting" and live.core.shoe.delivery_due
    replayed = Bench()
    replay(replayed.core, JournalInputs(inputs=[*b.inputs, *live.inputs], verdicts=[None] * (len(b.inputs) + 2),
                                        starts_before={len(b.inputs): None}))
    assert replayed.core.snapshot() == live.core.snapshot() and not replayed.core.faults


def test_a_restarts_commands_are_not_counted_so_a_replay_counts_the_same() -> None:
    """The commands a restart re-issues are not journaled as the core's own sends: counting them
    would make the live table and a later replay of its journal decide a BUSY differently (and the
    replay then refuse the journal). Their failures carry ``resent`` instead."""
    b = opened_without_answer()
    assert b.core.shoe.shuffles_out == 1
    restarted = Bench()
    restarted.core.recover(b.inputs)
    assert sent(restarted.core.resume_outputs(restart=True), m.Shuffle) == [m.Shuffle(8)]
    assert restarted.core.shoe.shuffles_out == 1  # as the journal's inputs say, whatever was re-issued
    restarted.feed(CommandFailed("shuffler", "SHUFFLE", "SHUFFLE refused: BUSY", refused=True, code="BUSY",
                                 resent=True))
    assert not restarted.core.faults and restarted.core.shoe.shuffles_out == 1  # the first may still run


def test_the_delivery_due_is_rebuilt_by_replaying_the_journaled_inputs() -> None:
    b = loading_after_a_lost_delivery()
    replayed = Bench(auto_deal=False)
    replayed.core.recover(b.inputs)
    assert replayed.core.state == "loading" and replayed.core.shoe.delivery_due
    assert sent(replayed.core.resume_outputs(), m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]


def test_an_automatic_shoe_gets_its_delivery_again_too() -> None:
    b = Bench(automatic_shoe=True, auto_deal=False)
    b._device_acts = lambda o: (b.event("shuffler", m.ShuffleDone(416, 416))  # the shuffler shuffles, the
                                if isinstance(o.message, m.Shuffle) else None)  # delivery gets no answer
    b.op("open")
    assert b.core.state == "loading"
    b.feed(CommandFailed("shuffler", "DELIVER", "no reply", refused=False))
    b.link("shuffler", False)
    assert sent(b.link("shuffler", True), m.Deliver) == [m.Deliver(m.DeliverTarget.SHOE)]


def automatic_shoe_near_its_cover_card() -> Bench:
    """An automatic shoe dealt until its cover card (14 cards above the bottom) is a round or two away."""
    b = Bench(automatic_shoe=True)
    b.op("open")
    while b.core.shoe.remaining > 24:
        b.play_round()
    return b


@pytest.mark.reg("681a.7(d)(1)")
def test_an_automatic_shoe_that_still_holds_the_last_shoes_cards_is_unloaded_then_given_the_stack() -> None:
    """681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the
    shoe": before the next stack goes in. An
    automatic shoe whose UNLOAD was lost refuses the next stack's DELIVER(SHOE) with NAK
    SHOE_NOT_EMPTY (the stack stays in the shuffler). No fault: the UNLOAD is shown again (safe:
    the stack is not in the shoe), a restart shows it too, and the shoe's SHOE_EMPTY sends the
    DELIVER again. Before, the refusal (then WRONG_STATE) held the table in a fault, and the
    DELIVER sent again at its clearing, refused alike, was taken for one already carried out."""
    b = automatic_shoe_near_its_cover_card()
    obey = b._device_acts

    def full_shoe(o: SendCommand) -> None:
        if isinstance(o.message, m.Display) and o.message.text.startswith("UNLOAD"):
            return  # lost
        if isinstance(o.message, m.Deliver):
            b.feed(CommandFailed("shuffler", "DELIVER", "DELIVER refused: SHOE_NOT_EMPTY", refused=True,
                                 code="SHOE_NOT_EMPTY"))
            return
        obey(o)

    b._device_acts = full_shoe
    while b.core.shoe.id == "T1-S0001":
        b.play_round()
    assert b.core.state == "loading" and not b.core.faults and b.core.prompt == "UNLOAD T1-S0001"
    restarted = Bench(automatic_shoe=True, auto_deal=False)
    restarted.core.recover(b.inputs)
    assert "UNLOAD T1-S0001" in [d.text for d in sent(restarted.core.resume_outputs(), m.Display)]
    b._device_acts = obey
    outs = b.event("shoe", m.ShoeEmpty())  # the dealer took the last shoe's cards out
    assert sent(outs, m.Deliver) == [m.Deliver(m.DeliverTarget.SHOE)]
    assert b.core.state == "betting" and b.of("shoe_loaded")[-1] == {"cards": 416}


def test_a_shoe_emptied_just_after_it_refused_the_stack_gets_it_at_once() -> None:
    """The shoe's SHOE_EMPTY can reach the table before the shuffler's refusal of a DELIVER that
    found the shoe still full (two links, or one event and one reply). The table then knows the
    shoe is empty now: it sends the DELIVER again at once, instead of showing an UNLOAD that
    an empty shoe would answer with no SHOE_EMPTY, and waiting for ever."""
    b = automatic_shoe_near_its_cover_card()
    obey = b._device_acts
    b._device_acts = lambda o: None if isinstance(o.message, m.Deliver) else obey(o)  # no answer yet
    while b.core.shoe.id == "T1-S0001":
        b.play_round()
    assert b.core.state == "loading"
    b._device_acts = obey
    b.event("shoe", m.ShoeEmpty())  # the dealer's UNLOAD, reported first ...
    outs = b.feed(CommandFailed("shuffler", "DELIVER", "DELIVER refused: SHOE_NOT_EMPTY", refused=True,
                                code="SHOE_NOT_EMPTY"))  # ... then the refusal of the DELIVER before it
    assert sent(outs, m.Deliver) == [m.Deliver(m.DeliverTarget.SHOE)]
    assert b.core.state == "betting" and not b.core.faults


@pytest.mark.parametrize("failure", [
    CommandFailed("shuffler", "DELIVER", "DELIVER refused: WRONG_STATE", refused=True, code="WRONG_STATE"),
    CommandFailed("shoe", "DISPLAY", "DISPLAY refused: BUSY", refused=True, code="BUSY", prompt="UNLOAD T1-S0001"),
])
def test_a_refusal_is_journaled_with_its_code_and_prompt_and_read_back_the_same(failure: CommandFailed) -> None:
    record = command_failed_record(failure, "T1-S0001", None)
    assert record.payload["code"] == failure.code and kinds.payload_problem(record.kind, record.payload) is None
    assert record.payload.get("prompt") == failure.prompt

    class Stored:
        kind, payload, schema_version, seq = record.kind, record.payload, 2, 1

    assert input_from(Stored()) == failure


@pytest.mark.parametrize("role, command, expected", [
    ("shuffler", m.Deliver(m.DeliverTarget.DEALER),
     CommandFailed("shuffler", "DELIVER", "DELIVER refused: WRONG_STATE: not now", refused=True,
                   code="WRONG_STATE")),
    ("shoe", m.Display("UNLOAD T1-S0001"),
     CommandFailed("shoe", "DISPLAY", "DISPLAY refused: WRONG_STATE: not now", refused=True,
                   code="WRONG_STATE", prompt="UNLOAD T1-S0001")),
])
def test_a_senders_refusal_reaches_the_core_with_the_naks_code_name(role: str, command: m.Command,
                                                                    expected: CommandFailed) -> None:
    """The sender turns a device's NAK into the core's input: refused, with the code's name (and
    a DISPLAY's text)."""
    import threading
    import time

    import structlog

    from controller.table import senders
    from firmware_bridge.errors import CommandFailed as DeviceRefused
    from firmware_bridge.protocol import NakCode

    failures: list[CommandFailed] = []

    class RefusingLink:
        name = "emulated-shuffler"

        def wait_connected(self, timeout: float) -> bool:
            return True

        def request(self, msg: object) -> None:
            raise DeviceRefused(msg, NakCode.WRONG_STATE, "not now")

    stopping = threading.Event()
    box = senders.DeviceSenders(stopping, failed=failures.append, log=structlog.get_logger())
    box.start(role, RefusingLink())
    assert box.send(SendCommand(role, command))
    deadline = time.monotonic() + 10
    while not failures and time.monotonic() < deadline:
        time.sleep(0.01)
    stopping.set()
    box.join(timeout=10)
    assert failures == [expected]


def test_a_command_refused_because_the_device_is_jammed_is_the_jam_fault_whose_clearing_resets_it() -> None:
    """The RESET sent when a floorperson cleared a jam was lost with the link; the shoe, still
    jammed, refused the next GATE_UNLOCK as JAM. That is the jam fault again (clearing it sends
    RESET), not a fault of the command, which the automated floorperson cleared three times
    without a RESET before closing the table (a stress run: jam-at with unplugs)."""
    b = Bench()
    b.open_and_cut()
    assert b.core.state == "betting"
    b.feed(CommandFailed("shoe", "GATE_UNLOCK", "GateUnlock refused: JAM: clear the jam (RESET) first", refused=True,
                         code="JAM"))
    assert list(b.core.faults) == ["jam:shoe"] and b.core.state == "fault"
    b.feed(CommandFailed("shoe", "GATE_UNLOCK", "GateUnlock refused: JAM", refused=True, code="JAM"))
    assert len(b.of("fault")) == 1  # said once
    outs = b.op("clear_fault", key="jam:shoe")
    assert m.Reset(m.ResetKind.MECHANISM) in sent(outs, m.Reset)
    assert b.core.state == "betting"


LOST_SESSION = "emulated-shuffler: SHUFFLE: device lost its session (NAK NOT_SYNCED): it restarted; outcome unknown"


def test_a_command_lost_with_the_devices_session_is_an_unknown_outcome() -> None:
    """A NAK NOT_SYNCED is not the device's answer to the command: it restarted, lost the session
    and did not look at it. The link reports an unknown outcome (CommandInterrupted) and reconnects,
    and the resume sends again what the state needs. Not a fault: as a command fault, its
    clearing sent no DELIVER once the cut was recorded, and the table waited in loading for ever
    (a stress run: reset-at=1 with unplugs)."""
    b = opened_without_answer()
    b.feed(CommandFailed("shuffler", "SHUFFLE", LOST_SESSION, refused=False))
    assert b.core.state == "shuffling" and not b.core.faults
    b = loading_after_a_lost_delivery()
    b.feed(CommandFailed("shuffler", "DELIVER", LOST_SESSION.replace("SHUFFLE", "DELIVER"), refused=False))
    assert not b.core.faults
    assert sent(b.core.resume_outputs(), m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]


def test_a_lost_session_journaled_as_a_refusal_before_is_read_as_an_unknown_outcome() -> None:
    """Journals written before the link said so hold such a command as refused with the code
    NOT_SYNCED: read back, it is the unknown outcome the core now gets, so that resuming such a
    journal decides as the table did then (no fault); any other refusal reads back as written."""
    class Stored:
        kind, schema_version, seq = kinds.INPUT_COMMAND_FAILED, 2, 1
        payload = {"device_role": "shuffler", "command": "SHUFFLE", "refused": True, "code": "NOT_SYNCED",
                   "reason": "Shuffle refused: NOT_SYNCED: send SYNC first"}

    assert input_from(Stored()) == CommandFailed("shuffler", "SHUFFLE", "Shuffle refused: NOT_SYNCED: send SYNC first",
                                                 refused=False)
    b = opened_without_answer()
    b.feed(input_from(Stored()))
    assert b.core.state == "shuffling" and not b.core.faults
    Stored.payload = {**Stored.payload, "code": "BUSY", "reason": "Shuffle refused: BUSY"}
    assert input_from(Stored()) == CommandFailed("shuffler", "SHUFFLE", "Shuffle refused: BUSY", refused=True,
                                                 code="BUSY")


def test_a_refused_delivery_is_sent_again_once_the_floorperson_clears_the_fault_even_after_the_cut() -> None:
    b = Bench(auto_deal=False)
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.op("open")
    b.op("cut", Role.DEALER, position=100)
    b.feed(CommandFailed("shuffler", "DELIVER", "Deliver refused: DOOR_OPEN", refused=True, code="DOOR_OPEN"))
    assert list(b.core.faults) == ["command:shuffler"]
    outs = b.op("clear_fault", key="command:shuffler")
    assert b.core.state == "cutting" and sent(outs, m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]


def test_a_delivery_a_restart_sent_again_refused_as_wrong_state_is_said_not_a_fault() -> None:
    """A restart before the cut sends DELIVER again (the first may have been lost with the
    process). Refused as WRONG_STATE, nothing was left to deliver: the dealer has the stack. The
    same refusal of a DELIVER the restart did not send again is still a fault."""
    b = Bench(auto_deal=False)
    b.op("open")
    assert b.core.state == "cutting" and not b.core.shoe.delivery_due
    resent = CommandFailed("shuffler", "DELIVER", "DELIVER refused: WRONG_STATE: nothing shuffled to deliver",
                           refused=True, code="WRONG_STATE", resent=True)
    outs = b.feed(resent)
    assert b.core.state == "cutting" and not b.core.faults
    assert any("already taken a DELIVER" in o.text for o in outs if hasattr(o, "text"))
    b.feed(CommandFailed("shuffler", "DELIVER", "DELIVER refused: WRONG_STATE: nothing shuffled to deliver",
                         refused=True, code="WRONG_STATE"))
    assert list(b.core.faults) == ["command:shuffler"]


def test_a_resent_command_is_journaled_so_and_read_back_the_same() -> None:
    resent = CommandFailed("shuffler", "DELIVER", "DELIVER refused: WRONG_STATE", refused=True, code="WRONG_STATE",
                           resent=True)
    plain = CommandFailed("shuffler", "DELIVER", "no reply", refused=False)
    for failure, key in ((resent, True), (plain, None)):
        record = command_failed_record(failure, "T1-S0001", None)
        assert record.payload.get("resent") is key and kinds.payload_problem(record.kind, record.payload) is None

        class Stored:
            kind, payload, schema_version, seq = record.kind, record.payload, 2, 1

        assert input_from(Stored()) == failure


def test_a_defect_in_sending_a_command_is_a_failed_command_and_the_sender_lives_on() -> None:
    """A review of the threads: the sender caught only the link's errors; any other exception ended
    its thread, and the device's later commands were queued for nobody while the table waited.
    It is now the command's failure (outcome unknown), logged as an error, and the next goes out."""
    import threading
    import time

    import structlog
    from structlog.testing import capture_logs

    from controller.table import senders
    from firmware_bridge.errors import CommandFailed as DeviceRefused
    from firmware_bridge.protocol import NakCode

    failures: list[CommandFailed] = []
    sent: list[object] = []

    class FlakyLink:
        name = "emulated-shoe"

        def wait_connected(self, timeout: float) -> bool:
            return True

        def request(self, msg: object) -> None:
            if not sent:
                sent.append(None)
                raise RuntimeError("a defect")
            if len(sent) == 1:
                sent.append(None)
                raise DeviceRefused(msg, NakCode.BUSY, "busy")
            sent.append(msg)

    stopping = threading.Event()
    with capture_logs() as logs:
        box = senders.DeviceSenders(stopping, failed=failures.append, log=structlog.get_logger())
        box.start("shoe", FlakyLink())
        assert box.send(SendCommand("shoe", m.GateUnlock()))
        assert box.send(SendCommand("shoe", m.GateLock(), shoe="S3", round=12))
        assert box.send(SendCommand("shoe", m.GateLock()))
        deadline = time.monotonic() + 10
        while len(sent) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        stopping.set()
        box.join(timeout=10)
    assert sent[2:] == [m.GateLock()]
    failure = failures[0]
    assert failure.command == "GATE_UNLOCK" and not failure.refused and failure.code is None
    assert "RuntimeError" not in failure.reason and "defect of this program" in failure.reason
    assert [e["log_level"] for e in logs if e["event"].startswith("command failed by a defect")] == ["error"]
    # each failure's line names the device, as the link's own lines do (a review of logs: only the role)
    assert [(e["event"], e["device"]) for e in logs if e["event"].startswith("command failed")] == [
        ("command failed by a defect of this program", "emulated-shoe"), ("command failed", "emulated-shoe")]
    # and the shoe and round it was sent in, where there were any (a review of logs: neither was said)
    assert [(e.get("shoe"), e.get("round")) for e in logs if e["event"].startswith("command failed")] == [
        (None, None), ("S3", 12)]
    assert "shoe" not in logs[0] and "round" not in logs[0]


def test_a_command_carries_the_shoe_and_round_it_was_sent_in() -> None:
    """What the senders' log line names: the core's commands carry the shoe and round in play, a
    restart's re-sent ones too."""
    b = Bench()
    b.open_and_cut()
    dealing = b.play_round([(1, "player", 100)])
    assert dealing
    in_round = [o for o in b.sent if o.round is not None]
    assert in_round and {(o.shoe, o.round) for o in in_round} == {(b.core.shoe.id, 1)}
    assert all(o.shoe == b.core.shoe.id for o in b.sent[-3:])
    resent = b.core.resume_outputs()
    assert resent and {(o.shoe, o.round) for o in resent} == {b.core.in_play()}


@pytest.mark.parametrize("command", ["DISPLAY", "SHUFFLE"])
def test_an_unreadable_reply_with_the_link_up_holds_the_table_and_clearing_sends_it_again(command: str) -> None:
    """A firmware review: a DISPLAY of the dealer's DRAW prompt, or a SHUFFLE, answered with a reply
    that is not the command's (or cannot be read) left the table waiting for ever, a warning in the
    log the only word: its outcome is unknown, and with the link up no reconnect's resume sends it
    again. The table holds in a fault; clearing it sends the command again. A link lost meanwhile
    stays a warning (its reconnect's resume sends again)."""
    b = Bench()
    if command == "SHUFFLE":
        obey, b._device_acts = b._device_acts, lambda o: None  # the shuffler's garbled ACK: nothing done
        b.op("open")
        b._device_acts = obey
        assert b.core.state == "shuffling"
        prompt = None
    else:
        b.open_and_cut()
        b.auto_deal = False
        b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
        b.op("no_more_bets", Role.DEALER)
        prompt = b.core.prompt
        assert prompt.startswith("DRAW")
    state = b.core.state
    lost = b.feed(CommandFailed("shoe" if prompt else "shuffler", command, f"{command}: link lost; outcome unknown",
                                refused=False, prompt=prompt))
    assert b.core.state == state and [o.level for o in lost if hasattr(o, "level")] == ["warning"]
    b.feed(CommandFailed("shoe" if prompt else "shuffler", command, f"{command}: protocol violation in the reply",
                         refused=False, prompt=prompt, answered=True))
    role = "shoe" if prompt else "shuffler"
    assert b.core.state == "fault" and f"command:{role}" in b.core.faults
    assert "answered, but whether it carried" in b.core.faults[f"command:{role}"]
    sent = len(b.sent)
    b.op("clear_fault", key=f"command:{role}")
    assert b.core.state == (state if prompt else "cutting")  # the shuffler shuffled the SHUFFLE sent again
    again = [o.message for o in b.sent[sent:]]
    assert any(m.wire_name(x) == command and (prompt is None or getattr(x, "text", None) == prompt) for x in again)


def test_the_sender_says_which_failures_left_the_link_up() -> None:
    """``answered`` is the link's UnreadableReply alone: not a refusal, a command not sent, nor one
    whose link was lost."""
    from controller.table.senders import _answered
    from firmware_bridge.errors import CommandInterrupted, CommandTimeout, LinkError, NotConnected, UnreadableReply

    assert _answered(UnreadableReply("x: protocol violation in the reply to DISPLAY"))
    assert not any(_answered(e) for e in (LinkError("x"), NotConnected("x"), CommandTimeout("x"),
                                          CommandInterrupted("x")))
