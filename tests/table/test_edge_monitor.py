"""The live edge monitor (controller/table/edge_monitor.py) on a real runner: the real core, links
over the in-memory loopback to an emulated table, a real SQLite journal and the real worker
(a process of its own, or a thread).

Each ``edge`` record must be exact_odds on the remaining shoe, which the test rebuilds on its own
from the journal's CARD_READ device events (the shoe's reads, not the table's records the monitor
counts from); figures for a shoe that ended before they came are dropped; a void round has none."""
from __future__ import annotations

from fractions import Fraction

import pytest
from runner_rig import INF, deal_with_the_edge_monitor, make_runner, run_to_the_end

from controller.journal import Journal, JournalReader, kinds, verify
from controller.rules.cards import Composition, card_from_wire, parse_card
from controller.rules.odds import exact_odds
from controller.rules.submission import load_preset
from controller.table.edge_monitor import EdgeMonitor
from controller.table.io import TableRecord
from firmware_bridge.emulator.table import EmulatedTable


def remaining_from_reads(entries: list, shoe: str, decks: int, before_seq: int) -> Composition:
    """The shoe's decks less every card its reader reported before entry ``before_seq``."""
    out = [card_from_wire(e.payload["fields"]["rank"], e.payload["fields"]["suit"]) for e in entries
           if e.kind == kinds.INPUT_DEVICE and e.payload["event"] == "CARD_READ" and e.shoe_id == shoe
           and e.seq < before_seq]
    return Composition.standard(decks).remove(out)


@pytest.mark.parametrize("worker", ["process", "thread"])
def test_each_round_gets_the_exact_figures_of_the_cards_left(tmp_path, worker: str) -> None:
    sub = load_preset("ez-baccarat")
    runner, monitor = deal_with_the_edge_monitor(tmp_path / "j.db", "ez-baccarat", seed=21, rounds=6, worker=worker)
    assert runner.error is None and monitor.computed == 6
    with JournalReader.open(tmp_path / "j.db") as r:
        entries = list(r.entries())
    results = {(e.shoe_id, e.payload["round"]): e for e in entries if e.kind == kinds.ROUND_RESULT}
    edges = [e for e in entries if e.kind == kinds.EDGE]
    assert sorted((e.shoe_id, e.payload["round"]) for e in edges) == sorted(results)
    for edge in edges:
        result = results[(edge.shoe_id, edge.payload["round"])]
        assert edge.seq > result.seq and edge.round_no == edge.payload["round"]
        left = remaining_from_reads(entries, edge.shoe_id, sub.decks, result.seq)
        expected = exact_odds(sub, left).wagers
        assert set(edge.payload["wagers"]) == {w.value for w in sub.wagers} == set(expected)
        for name, w in edge.payload["wagers"].items():
            assert Fraction(w["ev"]) == expected[name]["expected"], (edge.payload["round"], name)
            assert abs(Fraction(w["edge"]) - expected[name]["expected"]) < Fraction(1, 10**8)
        assert edge.payload["remaining"] == left.total and edge.payload["remaining_ranks"] == left.rank_counts()[1:]
        assert edge.payload["cards_out"] == sub.decks * 52 - left.total
        assert edge.payload["submission"] == "preset:ez-baccarat"
    assert verify(tmp_path / "j.db").ok


def _idle_runner(tmp_path, preset: str = "ez-baccarat"):
    """A runner that is not running: the test thread plays its owner (the journal's one writer)."""
    from controller.table.core import TableCore
    from controller.table.runner import TableRunner

    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    return TableRunner(TableCore(load_preset(preset)), journal), journal


def _deal(monitor: EdgeMonitor, shoe: str, cards: list[str], round_kind: str = "normal") -> None:
    monitor.observe(TableRecord(kinds.SHOE_START, {"shoe": shoe, "decks": 8}, shoe))
    for i, c in enumerate(cards, start=1):
        monitor.observe(TableRecord(kinds.CARD, {"card": c, "to": "player", "position": i, "n": i}, shoe, 1))
    monitor.observe(TableRecord(kinds.ROUND_RESULT, {"round": 1, "kind": round_kind}, shoe, 1))


def _run_owner_items(runner) -> None:
    """Do what the owner thread does with the items the monitor hands it."""
    item = runner.inbox.get(timeout=10)
    item.task()
    while not runner.inbox.empty():
        runner.inbox.get_nowait().task()


def test_figures_for_a_shoe_that_ended_before_they_came_are_dropped(tmp_path) -> None:
    runner, journal = _idle_runner(tmp_path)
    monitor = EdgeMonitor(worker="thread").attach(runner)
    try:
        _deal(monitor, "T1-S0001", ["9S", "8H", "KD", "QC"])
        monitor.observe(TableRecord(kinds.RECONCILIATION, {}, "T1-S0001"))  # the shoe ends first
        _run_owner_items(runner)
        assert (monitor.computed, monitor.dropped) == (0, 1)
        _deal(monitor, "T1-S0002", ["9S", "8H", "KD", "QC"])  # the next shoe's figures are journaled
        _run_owner_items(runner)
        assert (monitor.computed, monitor.dropped) == (1, 1)
    finally:
        monitor.close()
        journal.close()
    with JournalReader.open(tmp_path / "j.db") as r:
        assert [(e.kind, e.shoe_id) for e in r.entries()] == [(kinds.EDGE, "T1-S0002")]


def test_a_void_round_gets_no_figures_and_the_drain_journals_what_is_pending(tmp_path) -> None:
    runner, journal = _idle_runner(tmp_path)
    monitor = EdgeMonitor(worker="thread").attach(runner)
    try:
        _deal(monitor, "T1-S0001", ["9S", "8H", "KD", "QC"], round_kind="void")
        assert monitor._pending == []
        _deal(monitor, "T1-S0002", ["9S", "8H", "KD", "QC", "2C"])
        monitor.drain()  # as the table stops, on the owner thread: pending figures are journaled
        assert monitor.computed == 1
    finally:
        monitor.close()
        journal.close()
    with JournalReader.open(tmp_path / "j.db") as r:
        [edge] = list(r.entries())
    assert edge.kind == kinds.EDGE and edge.payload["cards_out"] == 5 and edge.payload["remaining"] == 411


def _one_round(tmp_path, preset: str, threshold: Fraction | int, cards: list[str]) -> tuple[list, list]:
    """One round of ``cards`` valued by a monitor on an idle runner: (the journal's entries, the notices)."""
    runner, journal = _idle_runner(tmp_path, preset)
    notices = []
    runner.on_notice = notices.append
    monitor = EdgeMonitor(threshold=threshold, worker="thread").attach(runner)
    try:
        _deal(monitor, "T1-S0001", cards)
        _run_owner_items(runner)
    finally:
        monitor.close()
        journal.close()
    with JournalReader.open(tmp_path / "j.db") as r:
        return list(r.entries()), notices


def test_a_wager_above_the_threshold_raises_the_notice_and_is_journaled(tmp_path) -> None:
    """A shoe stripped of every 8 and 9 (no naturals, many three-card hands): Dragon 7 and Panda 8
    turn in the player's favour."""
    rich = [f"{r}{s}" for r in "89" for s in "CDHS" for _ in range(8)]
    (edge, alert), notices = _one_round(tmp_path, "ez-baccarat", Fraction(1, 100), rich)
    assert edge.kind == kinds.EDGE and alert.kind == kinds.EDGE_ALERT
    hot = {k for k, w in edge.payload["wagers"].items() if Fraction(w["ev"]) > Fraction(1, 100)}
    assert "dragon7" in hot and set(alert.payload["wagers"]) == hot and alert.payload["threshold"] == "0.01"
    [notice] = notices
    assert notice.level == "warning" and notice.text.startswith("surveillance: player edge above 0.01 after round 1")
    assert "dragon7 +" in notice.text


def test_an_edge_exactly_at_the_threshold_raises_no_notice(tmp_path) -> None:
    """21 Baccarat's Player and Banker are exactly even (ev 0) on any shoe: at threshold 0 they are
    not above it, so no ``edge_alert`` and no notice; their edge is written ``0.00000000``."""
    [edge], notices = _one_round(tmp_path, "21-baccarat", 0, ["9S", "8H", "KD", "QC"])
    assert edge.kind == kinds.EDGE
    even = {k: w for k, w in edge.payload["wagers"].items() if w["ev"] == "0"}
    assert set(even) == {"player", "banker"} and all(w["edge"] == "0.00000000" for w in even.values())
    assert all(Fraction(w["ev"]) < 0 for k, w in edge.payload["wagers"].items() if k not in even)
    assert notices == []


@pytest.mark.parametrize("worker", ["thread", "process"])
def test_each_table_is_valued_by_its_own_rules_submission(tmp_path, worker: str) -> None:
    """Two monitors in one process, two Rules Submissions: neither is valued by the other's (the
    worker once kept submissions by a number per monitor, so the second table got the first's)."""
    from controller.table.core import TableCore
    from controller.table.runner import TableRunner

    offered = {}
    for preset in ("minibaccarat", "ez-baccarat"):
        journal = Journal.open(tmp_path / f"{preset}.db", table_id="T1")
        runner = TableRunner(TableCore(load_preset(preset)), journal)
        monitor = EdgeMonitor(worker=worker).attach(runner)
        try:
            _deal(monitor, "T1-S0001", ["9S", "8H", "KD", "QC"])
            _run_owner_items(runner)
        finally:
            monitor.close()
            journal.close()
        with JournalReader.open(tmp_path / f"{preset}.db") as r:
            [edge] = list(r.entries())
        offered[preset] = set(edge.payload["wagers"])
    assert offered == {p: {w.value for w in load_preset(p).wagers} for p in offered}


def test_a_thread_worker_lowers_the_switch_interval_while_it_runs(tmp_path) -> None:
    """A card's thread waits for the interpreter's lock while the worker thread counts: at most the
    switch interval, which is 5 ms unless the monitor lowers it (and restores it when the last
    thread-worker monitor closes; a process worker leaves it alone)."""
    import sys

    from controller.table.edge_monitor import SWITCH_INTERVAL_S

    before = sys.getswitchinterval()
    first, journal = _idle_runner(tmp_path)
    monitors = [EdgeMonitor(worker="thread").attach(first)]
    try:
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S) and SWITCH_INTERVAL_S < before
        monitors.append(EdgeMonitor(worker="thread").attach(first))
        monitors.pop(0).close()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)  # the other still runs
    finally:
        for m in monitors:
            m.close()
        journal.close()
    assert sys.getswitchinterval() == before


def test_a_resumed_table_values_the_shoe_it_left_in_play(tmp_path) -> None:
    """A table resumed from its journal in the middle of a shoe (the devices kept it): the monitor
    learns the shoe and its cards out from the journal (``prime``, as ``shoectl run`` does), so the
    rounds after the restart get their figures, exact on the shoe's reads."""
    sub = load_preset("ez-baccarat")
    table = EmulatedTable(seed=22, speed=INF)
    try:
        for _ in range(2):
            journal = Journal.open(tmp_path / "j.db", table_id="T1")
            runner = make_runner(table, journal, "ez-baccarat", rounds=3)
            monitor = EdgeMonitor()
            monitor.prime(journal.entries())
            monitor.attach(runner)
            try:
                run_to_the_end(runner)
            finally:
                monitor.close()
                journal.close()
            assert runner.error is None and monitor.computed == 3
    finally:
        table.close()
    with JournalReader.open(tmp_path / "j.db") as r:
        entries = list(r.entries())
    results = {(e.shoe_id, e.payload["round"]): e for e in entries if e.kind == kinds.ROUND_RESULT}
    edges = [e for e in entries if e.kind == kinds.EDGE]
    assert [e.payload["round"] for e in edges] == [1, 2, 3, 4, 5, 6] and len({e.shoe_id for e in edges}) == 1
    for edge in edges[3:]:
        left = remaining_from_reads(entries, edge.shoe_id, sub.decks, results[(edge.shoe_id, edge.payload["round"])].seq)
        assert {k: Fraction(w["ev"]) for k, w in edge.payload["wagers"].items()} == \
               {k: w["expected"] for k, w in exact_odds(sub, left).wagers.items()}


def _two_shoes(path) -> Journal:
    """A journal of two shoes: the first ended (reconciled), the second in play with two cards
    out; an operator record between them."""
    journal = Journal.open(path, table_id="T1")
    journal.append(kinds.SHOE_START, {"shoe": "T1-S0001", "decks": 8}, shoe="T1-S0001")
    for position, card in ((1, "AS"), (2, "KD"), (3, "9H")):
        journal.append(kinds.CARD, {"card": card, "to": "player", "position": position, "n": position}, shoe="T1-S0001")
    journal.append(kinds.RECONCILIATION, {"ok": True}, shoe="T1-S0001")
    journal.append("input.operator", {"command": "open"})
    journal.append(kinds.SHOE_START, {"shoe": "T1-S0002", "decks": 6}, shoe="T1-S0002")
    journal.append(kinds.BURN, {"card": "5C", "position": 1, "dealer": "Dana"}, shoe="T1-S0002")
    journal.append(kinds.CARD, {"card": "QS", "to": "banker", "position": 2, "n": 1}, shoe="T1-S0002")
    return journal


def _followed(monitor: EdgeMonitor) -> tuple:
    cards = monitor.cards
    return cards.shoe, cards.decks, dict(cards.out), cards.ended


def test_a_resumed_start_reads_the_shoe_in_play_only_and_learns_the_same(tmp_path) -> None:
    """``prime_from(journal)`` (what ``shoectl run`` calls when it resumes) reads the records from
    the last shoe start on and knows what ``prime`` over the whole journal knows."""
    journal = _two_shoes(tmp_path / "j.db")
    try:
        whole, from_start = EdgeMonitor(), EdgeMonitor()
        whole.prime(journal.entries())
        read: list[int] = []

        class Counting:
            def last_of_kind(self, kind: str):
                return journal.last_of_kind(kind)

            def entries(self, since_seq: int = 0):
                for e in journal.entries(since_seq=since_seq):
                    read.append(e.seq)
                    yield e

        from_start.prime_from(Counting())
        assert _followed(from_start) == _followed(whole) == ("T1-S0002", 6, {1: parse_card("5C"),
                                                                                2: parse_card("QS")}, False)
        assert read == [7, 8, 9]  # the second shoe's start and its two cards, not the first shoe
    finally:
        journal.close()


def test_without_a_shoe_start_every_record_is_read(tmp_path) -> None:
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    try:
        journal.append("input.operator", {"command": "open"})
        assert journal.last_of_kind(kinds.SHOE_START) is None
        monitor = EdgeMonitor()
        monitor.prime_from(journal)
        assert _followed(monitor) == (None, None, {}, True)
        journal.append(kinds.SHOE_START, {"shoe": "T1-S0001", "decks": 8}, shoe="T1-S0001")
        assert journal.last_of_kind(kinds.SHOE_START).seq == 2 and journal.last_of_kind("no-such-kind") is None
    finally:
        journal.close()


def test_a_worker_process_imports_neither_the_monitor_nor_the_logging() -> None:
    """A worker process (``worker="process"``, started by ``spawn``) imports the module of what it
    runs: ``controller.table.edge_worker``, which must not bring the monitor, the table's core or
    structlog (and the terminal library structlog takes when it can) into every table's start."""
    import subprocess
    import sys

    from controller.table.edge_worker import figures

    assert figures.__module__ == "controller.table.edge_worker"
    probe = ("import sys, controller.table.edge_worker; "
             "print(sorted(m for m in ('structlog', 'rich', 'controller.table.edge_monitor', 'controller.table.core') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
