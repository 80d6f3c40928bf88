"""The live display of shoectl run: the screen as a pure function (fits the terminal, grows with
it, colours), the shoe it shows at the end, and a real run on a pseudo-terminal read back through
a terminal emulator (pyte) as a person's screen."""
from __future__ import annotations

import io
import os
import sys

import pexpect
import pyte
import pytest
from bench import Bench
from firmware_bridge.protocol import messages as m
from rich.cells import cell_len
from rich.console import Console

from controller.table.autodealer import AutoDealer
from controller.table.display import LiveDisplay
from controller.table.display_screen import ShownShoe, screen

RED_BOLD = "\x1b[1;38;2;208;2;27m"     # banker: the roadmaps' red ink (#d0021b), bold
BLUE_BOLD = "\x1b[1;38;2;26;83;196m"   # player: #1a53c4
GREEN_BOLD = "\x1b[1;38;2;27;138;58m"  # tie: #1b8a3a


def _table_after(rounds: int, seed: int = 4) -> Bench:
    b = Bench(seed=seed)
    auto = AutoDealer(seed=seed)
    while len(b.of("round_result")) < rounds:
        b.feed(auto.next_input(b.core))
    return b


def _shown(renderable, width: int, height: int, *, colour: bool = False) -> str:
    console = Console(file=io.StringIO(), width=width, height=height, record=True,
                      color_system="truecolor" if colour else None, legacy_windows=False)
    console.print(renderable)
    return console.export_text(styles=colour)


def test_screen_fits_80_by_24_with_every_part() -> None:
    b = _table_after(40)
    snap = b.core.snapshot()
    snap["faults"] = {"door:shoe": "shoe door open"}
    snap["wagers"] = [{"seat": 2, "kind": "banker", "amount": 2500}, {"seat": 2, "kind": "tie", "amount": 505}]
    shown = ShownShoe(snap["shoe"], b.of("round_result"))
    text = _shown(screen(snap, shown, ["627a.13(d): a face-up card"], width=80, height=23), 80, 24)
    lines = text.rstrip("\n").split("\n")
    assert len(lines) <= 23 and max(map(cell_len, lines)) <= 80
    assert "betting" in lines[0] and "T1-S0001" in lines[0] and "cards left" in lines[0]
    assert "Last    round 40:" in text and "shoe door open" in text and "627a.13(d): a face-up card" in text
    assert "seat 2: banker 25.00, tie 5.05" in text  # money in major units, as everywhere a person reads it
    for road in ("Bead plate", "Big road", "Big eye boy", "Small road", "Cockroach pig"):
        assert road in text
    outcomes = [r["outcome"][0].upper() for r in b.of("round_result")]
    assert " ".join(outcomes[-10:]) in text  # the latest results, in order


def test_screen_grows_with_the_terminal() -> None:
    b = _table_after(60)
    snap = b.core.snapshot()
    shown = ShownShoe(snap["shoe"], b.of("round_result"))
    small = _shown(screen(snap, shown, [], width=80, height=23), 80, 24)
    big = _shown(screen(snap, shown, [], width=160, height=49), 160, 50)
    big_lines = big.rstrip("\n").split("\n")
    assert len(big_lines) <= 49 and max(map(cell_len, big_lines)) <= 160
    results = lambda t: next(line for line in t.split("\n") if line.startswith("Results")).count(" ")  # noqa: E731
    assert results(big) > results(small)
    assert "Latest rounds" in big and "round 60: Player" in big and big.count("round 5") > small.count("round 5")
    road_row = lambda t: next(line for line in t.split("\n") if line.startswith(("P ", "B ", "T ")))  # noqa: E731
    assert len(road_row(big)) > len(road_row(small))  # more road columns


def test_short_screen_leaves_out_the_legend_and_derived_roads_not_the_table() -> None:
    b = _table_after(10)
    snap = b.core.snapshot()
    text = _shown(screen(snap, ShownShoe(snap["shoe"], b.of("round_result")), [], width=80, height=16), 80, 16)
    assert len(text.rstrip("\n").split("\n")) <= 16
    assert "Big road" in text and "Wagers" in text and "Big eye boy" not in text


def test_banker_red_player_blue_tie_green() -> None:
    b = _table_after(30, seed=9)
    snap = b.core.snapshot()
    text = _shown(screen(snap, ShownShoe(snap["shoe"], b.of("round_result")), [], width=100, height=29), 100, 30,
                  colour=True)
    assert f"{RED_BOLD}B" in text and f"{BLUE_BOLD}P" in text and f"{GREEN_BOLD}T" in text
    assert f"{RED_BOLD}Banker" in text and f"{BLUE_BOLD}Player" in text


def test_after_a_new_shoe_starts_the_last_dealt_shoe_stays_on_screen() -> None:
    b = _table_after(3)
    display = LiveDisplay(b.core.snapshot, out=io.StringIO())
    for r in b.records:
        display.record(r)
    dealt = display.shown()
    assert dealt.shoe == "T1-S0001" and len(dealt.rounds) == 3 and not dealt.last
    display.record(type(b.records[0])("shoe_start", {"shoe": "T1-S0002", "decks": 8}, "T1-S0002", None))
    shown = display.shown()
    assert shown.shoe == "T1-S0001" and shown.last and [r["round"] for r in shown.rounds] == [1, 2, 3]
    display.close()
    assert "Roadmaps of T1-S0001, the last dealt shoe" in display.console.file.getvalue()


@pytest.mark.slow
def test_run_on_a_terminal_redraws_in_place_in_colour_and_ends_on_the_dealt_shoe(tmp_path) -> None:
    """``shoectl run --shoes 1`` on an 80x24 pseudo-terminal: the screen is redrawn line by line
    (never a whole-screen clear), in colour, and what is left at the end is the shoe just dealt
    with its roads, although the next shoe was already being shuffled."""
    env = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor")
    env.pop("COLUMNS", None), env.pop("LINES", None)
    child = pexpect.spawn(sys.executable, ["-m", "controller.cli.main", "run", "--journal", str(tmp_path / "j.db"),
                                           "--shoes", "1", "--speed", "max", "--seed", "2"],
                          env=env, encoding="utf-8", dimensions=(24, 80), timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    out = child.before
    assert child.exitstatus == 0, out[-2000:]
    # Erased and redrawn by the line (never a whole-screen clear), screen after screen (how many
    # depends on how fast the machine dealt the shoe: at 8 a second, a shoe at --speed max takes a few).
    assert "\x1b[2J" not in out
    screens = out.count("Minibaccarat, 8 decks")
    assert screens >= 2 and out.count("\x1b[2K") >= 20 * (screens - 1), (screens, out.count("\x1b[2K"))
    assert RED_BOLD in out and BLUE_BOLD in out
    term = pyte.Screen(80, 24)
    pyte.Stream(term).feed(out)
    shown = "\n".join(term.display)
    assert "Roadmaps of T1-S0001, the last dealt shoe" in shown, shown
    assert "Big road" in shown and "journal " in shown
    bead = shown.split("Bead plate", 1)[1].split("\n")[1]
    assert bead.split()[0] in ("B", "P", "T", "Bb", "Bp", "B*", "Pb", "Pp", "P*", "Tb", "Tp", "T*")


@pytest.mark.slow
def test_the_screen_fits_the_terminal_though_columns_and_lines_in_the_environment_say_more(tmp_path) -> None:
    """A review of environments: COLUMNS=120 exported (a shell profile's, a wider window's) on an
    80x24 terminal drew every line 120 wide; each wrapped, the line-by-line erase missed the
    wrapped halves, and what stayed on the screen was debris (the README: the screen fits "80x24
    and growing with the terminal"). The terminal's own size rules."""
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="60")
    child = pexpect.spawn(sys.executable, ["-m", "controller.cli.main", "run", "--journal", str(tmp_path / "j.db"),
                                           "--rounds", "5", "--speed", "max", "--seed", "2"],
                          env=env, encoding="utf-8", dimensions=(24, 80), timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before[-2000:]
    term = pyte.Screen(80, 24)
    pyte.Stream(term).feed(child.before)
    shown = "\n".join(term.display)
    assert "Roadmaps of T1-S0001" in shown and "Bead plate" in shown and "Big road" in shown, shown


def test_an_empty_shoe_and_a_closed_table_keep_every_name_whole() -> None:
    b = Bench(seed=1)
    closed = _shown(screen(b.core.snapshot(), ShownShoe(None), [], width=80, height=23), 80, 24)
    assert "no shoe in play" in closed.split("\n")[0] and "None" not in closed
    b.open_and_cut()
    snap = b.core.snapshot()
    text = _shown(screen(snap, ShownShoe(snap["shoe"]), [], width=80, height=23), 80, 24)
    for name in ("Bead plate", "Big road", "Big eye boy", "Small road", "Cockroach pig", "no round yet in this shoe"):
        assert name in text
    assert "None" not in text


def test_a_screen_for_a_terminal_that_is_not_utf8_is_ascii() -> None:
    """A Latin-1 pit terminal: the screen's marks (the round's arrow, the dots, the results cut
    short, the derived roads') are spelled in ASCII; they made rich raise on every redraw, and the
    table ran with a blank screen and ended in a traceback (a review of terminals)."""
    b = _table_after(70)
    snap = b.core.snapshot()
    snap["cover_reached"] = True
    shown = ShownShoe(snap["shoe"], b.of("round_result"))
    text = _shown(screen(snap, shown, [], width=80, height=40, unicode=False), 80, 40)
    assert text.isascii(), sorted({c for c in text if not c.isascii()})
    assert "  -> " in text and "... " in text and " . round " in text  # the arrow, the results cut, the header
    assert not _shown(screen(snap, shown, [], width=80, height=40), 80, 40).isascii()  # UTF-8: the marks


def test_run_and_the_readers_on_a_latin1_terminal_escape_what_it_lacks(tmp_path) -> None:
    """A dealer's name or a reason with characters outside Latin-1 ("Łukasz", "–"): every reader
    wrote it with a traceback and exit 1 (for `journal replay`: "does not verify"); now the
    character is written as its escape, the rest as the terminal's own."""
    import subprocess

    from cli_run import dealt_journal
    from controller.journal import Journal

    journal = dealt_journal(tmp_path / "j.db", "--rounds", "1", "--no-edge-monitor")
    with Journal.open(journal, table_id="T1") as w:
        w.append("dealer", {"dealer": "Łukasz Nowak – Spätschicht"}, shoe="T1-S0001")
    env = dict(os.environ, PYTHONIOENCODING="latin-1")
    for argv in (["journal", "replay", str(journal)], ["journal", "replay", str(journal), "--json"],
                 ["journal", "export", str(journal)]):
        done = subprocess.run([sys.executable, "-m", "controller.cli.main", *argv], env=env, capture_output=True,
                              timeout=60)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, (argv, done.stderr[-500:])
        assert b"\\u0141ukasz Nowak \\u2013 Sp\xe4tschicht" in done.stdout, argv


def test_run_on_a_dumb_terminal_writes_lines(tmp_path) -> None:
    """TERM=dumb cannot redraw: the live screen showed nothing until the run ended (a review of
    terminals); `run` writes its lines there, as into a pipe."""
    env = dict(os.environ, TERM="dumb")
    child = pexpect.spawn(sys.executable, ["-m", "controller.cli.main", "run", "--journal", str(tmp_path / "j.db"),
                                           "--rounds", "2", "--speed", "max", "--seed", "2", "--no-edge-monitor"],
                          env=env, encoding="utf-8", dimensions=(24, 80), timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before[-2000:]
    assert "round   2 [normal]" in child.before and "Roadmaps of" not in child.before


def test_the_legend_is_whole_on_an_80_column_terminal() -> None:
    b = _table_after(10)
    snap = b.core.snapshot()
    text = _shown(screen(snap, ShownShoe(snap["shoe"], b.of("round_result")), [], width=80, height=60), 80, 60)
    assert "pairs: p player, b banker, * both · number: ties" in text


def test_a_shoe_given_up_once_the_faults_clear_is_said_over_the_dealers_prompt() -> None:
    """A review: after `restart_shoe` while a jam held the table, the table's own screen still
    read "Dealer: DRAW PLAYER @4", a card of a shoe already given up."""
    b = Bench()
    b.dealing_by_hand()
    b.draw()
    b.event("shoe", m.Jam(m.JamLocation.SHOE_EXIT))
    b.op("restart_shoe", reason="torn")
    snap = b.core.snapshot()
    text = _shown(screen(snap, ShownShoe(snap["shoe"]), [], width=100, height=23), 100, 24)
    assert "SHOE GIVEN UP once they are cleared (torn)" in text and "Dealer: DRAW" not in text


def test_a_line_printed_above_the_screen_is_not_painted_over_and_the_screen_is_there_before_a_record() -> None:
    """A review of terminals: the run's warnings, written past the live screen, were painted over by
    its next redraw (3-5 lines of an old screen left at the top, the warning gone), and a closed
    ``--manual`` table showed a blank terminal until its first record. A line handed to the screen
    is printed above it; the screen is drawn at ``start``."""
    from controller.queued_output import QueuedOutput

    term = io.StringIO()
    bench = _table_after(3)
    display = LiveDisplay(bench.core.snapshot, out=term)
    display.console = Console(file=term, force_terminal=True, width=80, height=24, highlight=False)
    assert display.print_above("!! not yet") is False  # no screen drawn: the caller writes it
    display.start()
    err = QueuedOutput(io.StringIO(), name="test-stderr")
    err.divert = display.print_above  # on its writing thread: a paused terminal holds that thread alone
    assert err.write("\x1b[33m!! the shoe's gate is locked: a warning a person must read\x1b[0m\n")
    assert err.finish()
    display.live.refresh()
    display.close()
    screen_now = pyte.Screen(80, 24)
    pyte.Stream(screen_now).feed(term.getvalue().replace("\n", "\r\n"))  # a terminal's line discipline (onlcr)
    shown = "\n".join(screen_now.display)
    assert "!! the shoe's gate is locked: a warning a person must read" in shown, shown
    assert shown.count("Minibaccarat, 8 decks") == 1 and "Bead plate" in shown  # one screen, drawn whole


@pytest.mark.parametrize(("env", "utf8"), [
    ({"LANG": "C.UTF-8"}, True), ({"LANG": "en_US.UTF-8"}, True), ({}, True),  # nothing set: the stream decides
    ({"LANG": "C"}, False), ({"LANG": "C", "LC_CTYPE": "C.UTF-8"}, False),  # Python's coercion of LANG=C (PEP 538)
    ({"LC_ALL": "C", "LANG": "en_US.UTF-8"}, False), ({"LC_ALL": "POSIX"}, False),
    ({"LC_CTYPE": "C", "LANG": "en_US.UTF-8"}, False), ({"LC_CTYPE": "en_US.UTF-8", "LANG": "C"}, True),
])
def test_a_terminal_of_the_c_locale_gets_ascii_though_python_writes_utf8(monkeypatch, env, utf8) -> None:
    """A review of terminals: under LANG=C or LC_ALL=C Python writes UTF-8 all the same (PEP 538,
    540), so the live screen and the progress bar drew `·`, `→`, `○` a C-locale terminal showed as
    `Â·`; the ASCII spellings the screen has were never chosen."""
    from shoectl_config.text import writes_utf8

    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert writes_utf8("utf-8") is utf8
    assert writes_utf8("latin-1") is False


def test_a_final_screen_written_to_a_file_ends_with_its_newline() -> None:
    """A review of terminals: `run --display live > file` wrote the final screen without its last
    newline, and the run's last line (`journal ...: N:HASH`) ran into its legend."""
    out = io.StringIO()
    display = LiveDisplay(_table_after(2).core.snapshot, out=out)
    display.start()
    display.close()
    written = out.getvalue()
    assert written.endswith("\n") and not written.endswith("\n\n"), written[-80:]  # one line end, no blank line


@pytest.mark.parametrize("state", ["count_fault", "ready_to_deal", "house_money", "betting"])
@pytest.mark.parametrize("width", [80, 72, 40])
def test_the_header_keeps_the_table_s_state_whole_and_shortens_the_game_s_name_first(state: str, width: int) -> None:
    """A review of terminals: at 80 columns the header cut the state (`count fau…`, `ready to …`,
    `house mon…`) or dropped it once "cover card out" showed; at 40 the shoe and round went for
    the game's name."""
    snap = dict(_table_after(3).core.snapshot(), state=state, cover_reached=True)
    header = _shown(screen(snap, ShownShoe(snap["shoe"]), [], width=width, height=23), width, 24).split("\n")[0]
    assert cell_len(header) <= width and f" {state.replace('_', ' ')} " in header, header
    assert header.startswith("T1 ") and "shoe T1-S0001" in header, header
    if width == 80:
        assert "cover card out" in header and "round 3" in header, header


def test_every_seat_s_wagers_show_at_80_columns() -> None:
    """A review of terminals: with six seats wagering, the Wagers line showed three and then
    `seat …`. Short of room it gives each seat's total and count, then its total alone."""
    snap = dict(_table_after(3).core.snapshot())
    snap["wagers"] = [{"seat": s, "kind": k, "amount": a} for s in range(1, 7)
                      for k, a in (("banker", 2500), ("player_pair", 500))]
    wide, narrow = (_shown(screen(snap, ShownShoe(snap["shoe"]), [], width=w, height=23), w, 24).split("\n")[3]
                    for w in (400, 80))
    assert wide.startswith("Wagers  seat 1: banker 25.00, player_pair 5.00; seat 2: ") and wide.count("seat ") == 6
    assert narrow == "Wagers  1: 30.00  2: 30.00  3: 30.00  4: 30.00  5: 30.00  6: 30.00"


def test_a_long_notice_takes_two_lines_and_keeps_its_figure_whole() -> None:
    """A review of terminals: at 80 columns a surveillance notice's figure was cut
    (`player_pair +1…` for +14.7059 %)."""
    snap = _table_after(3).core.snapshot()
    notice = ("edge: the player's edge on player_pair is +14.7059% on the cards left after round 3 of T1-S0001 "
              "(threshold 0%): watch the seats that wager on it")
    text = _shown(screen(snap, ShownShoe(snap["shoe"]), [notice], width=80, height=30), 80, 30)
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("!! edge:"))
    assert "+14.7059%" in lines[at] + lines[at + 1] and lines[at + 1].startswith("   ")
    assert "watch the seats that wager on it" in lines[at + 1]


def test_lines_printed_above_while_the_screen_redraws_never_freeze_it(monkeypatch) -> None:
    """A review of the day's changes: printing a warning above the screen held the display's lock
    and asked for rich's Live lock, while rich's refresh thread held its lock and asked ``render``
    for the display's: a warning froze the table (its next record waited for ever)."""
    import threading
    import time

    from controller.table import display as display_module

    monkeypatch.setattr(display_module, "REFRESH_PER_SECOND", 200)  # many redraws: the two meet soon
    term = io.StringIO()
    display = LiveDisplay(_table_after(2).core.snapshot, out=term)
    display.console = Console(file=term, force_terminal=True, width=80, height=24, highlight=False)
    display.start()
    printed = []

    def warn() -> None:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            display.print_above(f"!! warning {len(printed)}")
            printed.append(1)

    printer = threading.Thread(target=warn, daemon=True)
    printer.start()
    printer.join(15)
    frozen = printer.is_alive()
    if not frozen:
        display.close()
    assert not frozen and len(printed) > 50, len(printed)


def test_standard_error_on_another_terminal_is_not_taken_for_the_screen_s(tmp_path) -> None:
    """A review of the day's changes: `run 2>/dev/pts/5` (another terminal) had its warnings printed
    above the live screen on the first, for both were terminals."""
    import pty

    from controller.cli.common import same_terminal

    first, second = pty.openpty(), pty.openpty()
    try:
        with open(first[1], "w", closefd=False) as a, open(first[1], "w", closefd=False) as a_again, \
                open(second[1], "w", closefd=False) as b, open(tmp_path / "f", "w") as plain:
            assert same_terminal(a, a_again) and not same_terminal(a, b) and not same_terminal(a, plain)
    finally:
        for fd in (*first, *second):
            os.close(fd)


def test_a_paused_terminal_holds_only_the_writer_of_its_warnings_and_a_file_keeps_its_encoding(monkeypatch) -> None:
    """A review of the day's changes: a warning handed to the screen was printed on the thread that
    had it (a link's, the table's): with the terminal paused (Ctrl-S) the table stopped. It is
    printed by standard error's own writing thread. And `run --display live > file` under LC_ALL=C
    wrote ASCII where the file's encoding (UTF-8) had written `·` before: the locale is the
    terminal's business only."""
    import threading
    import time

    from controller.queued_output import QueuedOutput

    paused, printed = threading.Event(), []
    err = QueuedOutput(io.StringIO(), name="test-stderr")
    def to_the_terminal(text: str) -> bool:  # a terminal paused until ``paused`` is set
        paused.wait(10)
        printed.append(text)
        return True

    err.divert = to_the_terminal
    started = time.monotonic()
    assert err.write("!! one\n") and err.write("!! two\n")
    assert time.monotonic() - started < 1 and not printed  # the caller went on
    paused.set()
    assert err.finish() and "".join(printed) == "!! one\n!! two\n"

    monkeypatch.setenv("LC_ALL", "C")
    out = io.StringIO()
    display = LiveDisplay(_table_after(2).core.snapshot, out=out)
    display.console = Console(file=out, width=80, height=24, highlight=False, force_terminal=False)
    display.close()
    assert "·" in out.getvalue()
