"""Two consoles at one Midibaccarat squeeze (629a.8(c)-(d)): a ``reveal`` or ``relinquish`` typed
without naming the hand is sent by the console for the squeeze it last showed, so that the second
of two operators' commands for the same hand is refused by the table instead of acting on the next
hand (a review of races). The consoles' commands go to a real table core (bench.py); their events
are the core's records, shaped as the control socket's event stream shapes them."""
from __future__ import annotations

import threading

import pytest
from bench import Bench

from controller.cli.console import Console
from controller.roles import Role
from controller.table.io import TableRecord


class _Seat:
    """A console's control client on the bench's core: each command is the operator's input."""

    def __init__(self, bench: Bench, role: Role) -> None:
        self.bench, self.role = bench, role

    def command(self, operator: str, pin: str, command: str, args: dict) -> dict:
        outs = self.bench.op(command, self.role, operator=operator, **args)
        refused = [o.payload["reason"] for o in outs if isinstance(o, TableRecord) and o.kind == "refused"]
        return {"ok": False, "code": "refused", "error": refused[0]} if refused else {"ok": True, "records": []}


def _following(console: Console) -> Console:
    """``console`` as an interactive one: it follows the events (fed here by the test), and asks the
    table nothing before a squeeze command (``Console.run`` sets the same)."""
    console._watching = True
    return console


def _events(bench: Bench, since: int) -> list[dict]:
    """The records since ``since`` as the event stream gives them (subscribers.py)."""
    return [{"type": r.kind, "shoe": r.shoe, "round": r.round, **(r.shown or r.payload)} for r in bench.records[since:]]


@pytest.mark.reg("629a.8(c)(2)", "629a.8(d)")
def test_the_second_consoles_reveal_for_a_hand_already_turned_over_is_refused(capsys) -> None:
    """629a.8(c)(2): "The dealer shall then hand the two cards of the Banker's Hand, face down, to the
    player with the highest wager on the Banker's Hand"; 629a.8(d): "The dealer or floorperson
    assigned to the table may require any player to relinquish the right to turn over the cards".
    The dealer's and the floorperson's consoles both
    showed the Player's Hand squeezed by seat 2; each typed `reveal`. The dealer's came first; the
    floorperson's, sent for the Player's Hand it showed, is refused and the Banker's Hand stays with
    seat 1; once its console has shown the Banker's squeeze, its commands act on that."""
    b = Bench("midibaccarat")
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 200), (3, "player", 100), (1, "banker", 70)])
    dealer = _following(Console(_Seat(b, Role.DEALER), "fp1", "2580", terminal=False))  # type: ignore[arg-type]
    floor = _following(Console(_Seat(b, Role.FLOORPERSON), "fp2", "2580", terminal=False))  # type: ignore[arg-type]
    for console in (dealer, floor):
        for ev in _events(b, 0):
            console.squeeze.see(ev)
    seen = len(b.records)
    dealer.command("reveal", [])
    assert b.of("revealed")[-1]["hand"] == "player" and b.of("squeeze")[-1] == {"hand": "banker", "seat": 1}
    floor.command("reveal", [])  # its console has not shown the Banker's squeeze yet
    floor.command("relinquish", [])
    assert [r["reason"] for r in b.of("refused")[-2:]] == [
        "the player hand is not being squeezed: the banker hand is, held by seat 1"] * 2
    assert floor.last_code != 0 and len(b.of("revealed")) == 1 and not b.of("relinquished")
    for ev in _events(b, seen):
        floor.squeeze.see(ev)
    floor.command("relinquish", [])  # seat 1 delays the game: the right passes on
    assert b.of("relinquished")[-1]["seat"] == 1 and b.of("relinquished")[-1]["hand"] == "banker"
    held_by = b.of("relinquished")[-1]["to"]
    for ev in _events(b, seen):  # the dealer's console shows the Banker's squeeze, not yet its relinquishment
        if ev["type"] != "relinquished":
            dealer.squeeze.see(ev)
    dealer.command("relinquish", [])  # sent for seat 1, which it showed, and which no longer holds it
    assert b.of("refused")[-1]["reason"] == f"seat 1 does not hold the banker hand: seat {held_by} does"
    out = capsys.readouterr().out
    assert "reveal: refused: the player hand is not being squeezed" in out


def test_the_squeeze_and_its_relinquishment_are_lines_of_the_events() -> None:
    """What the consoles showed, and `ctl watch` shows: who holds which hand."""
    from controller.cli.cmd_ctl import event_text

    b = Bench("midibaccarat")
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 200), (3, "player", 100), (1, "banker", 70)])
    b.op("relinquish", Role.DEALER)
    lines = [event_text(ev) for ev in _events(b, 0) if ev["type"] in ("squeeze", "relinquished")]
    assert lines == ["squeeze: the player hand to seat 2", "squeeze: seat 2 gave up the player hand, now seat 3's"]


@pytest.mark.reg("629a.8(c)(2)")
def test_a_console_that_joins_or_sees_a_fault_mid_squeeze_still_names_the_hand() -> None:
    """629a.8(c)(2): "The dealer shall then hand the two cards of the Banker's Hand, face down, to the
    player with the highest wager on the Banker's Hand". A review of this change: a console that
    joined during the Player's squeeze (its stream begins with the status, not the squeeze event),
    or that saw a fault during it (the table resumes the squeeze without a new squeeze event), sent
    `reveal` without its hand, and turned the Banker's Hand over. It learns the squeeze from the
    status's prompt, and a fault does not make it forget."""
    b = Bench("midibaccarat")
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 200), (3, "player", 100), (1, "banker", 70)])
    dealer = _following(Console(_Seat(b, Role.DEALER), "fp1", "2580", terminal=False))  # type: ignore[arg-type]
    joined = _following(Console(_Seat(b, Role.FLOORPERSON), "fp2", "2580", terminal=False))  # type: ignore[arg-type]
    joined.squeeze.see_status(b.core.snapshot())  # the first line of its stream: SQUEEZE PLAYER SEAT 2
    assert (joined.squeeze.hand, joined.squeeze.seat) == ("player", 2)
    seen = len(b.records)
    b.link("shoe", False)  # the shoe's link drops and comes back: a fault during the squeeze
    b.link("shoe", True)
    for ev in _events(b, seen):
        joined.squeeze.see(ev)
    assert b.core.state == "squeeze" and (joined.squeeze.hand, joined.squeeze.seat) == ("player", 2)
    for ev in _events(b, 0):
        dealer.squeeze.see(ev)
    dealer.command("reveal", [])
    joined.command("reveal", [])  # a moment late: refused, the Banker's Hand stays with seat 1
    assert [r["hand"] for r in b.of("revealed")] == ["player"]
    assert b.of("refused")[-1]["reason"] == "the player hand is not being squeezed: the banker hand is, held by seat 1"


def test_a_squeeze_no_player_holds_is_said_as_the_dealers() -> None:
    from controller.cli.cmd_ctl import event_text

    assert event_text({"type": "squeeze", "hand": "player", "seat": None}) == (
        "squeeze: the player hand, held by no player: the dealer turns it over")


class _Watched(_Seat):
    """A console's client whose event stream begins with the table's status, then ends."""

    def status(self) -> dict:
        return {"ok": True, "status": self.bench.core.snapshot()}

    def events(self, *, since_start: bool = False):  # noqa: ANN201 - the stream as ControlClient.events
        yield {"status": self.bench.core.snapshot(), "run": "r1"}
        # Then nothing more, for ever: the watcher (a daemon thread) waits here, and says nothing
        # into other tests' output (a stream that ended was said so, again and again).
        threading.Event().wait()


def test_the_console_takes_the_squeeze_from_its_streams_status_and_a_script_from_the_tables() -> None:
    """The wiring a review found untested: the interactive console's watcher reads the squeeze from
    its stream's first line (the status), and a script, which follows no events, asks the table's
    status before a `reveal` or `relinquish` typed without a hand (a piped `reveal` went without)."""
    import time

    b = Bench("midibaccarat")
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 200), (3, "player", 100), (1, "banker", 70)])
    watching = Console(_Watched(b, Role.FLOORPERSON), "fp2", "2580", terminal=False)  # type: ignore[arg-type]
    threading.Thread(target=watching._watch, daemon=True).start()
    deadline = time.monotonic() + 10
    while watching.squeeze.hand is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (watching.squeeze.hand, watching.squeeze.seat) == ("player", 2)
    script = Console(_Watched(b, Role.DEALER), "fp1", "2580", terminal=False)  # type: ignore[arg-type]
    assert script.run_lines(["reveal"]) == 0
    assert b.of("operator")[-1]["args"] == {"hand": "player"} and b.of("revealed")[-1]["hand"] == "player"
