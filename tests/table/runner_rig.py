"""A ``TableRunner`` rigged in one process for tests: the real core, the given journal and real
host links over the in-memory loopback transport to an emulated table (``make_runner``), run in a
thread of its own (``run_in_thread``) or to its end (``run_to_the_end``); ``INF`` is the emulator's
unthrottled speed."""
from __future__ import annotations

import threading

from controller.journal import Journal
from controller.rules.submission import load_preset
from controller.table.autodealer import AutoDealer
from controller.table.core import TableCore
from controller.table.recovery import rules_asked_for
from controller.table.runner import TableRunner
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.emulator.table import EmulatedTable
from firmware_bridge.link import DeviceLink
from firmware_bridge.profiles import get_profile

INF = float("inf")


def make_runner(table: EmulatedTable, journal: Journal, preset: str = "minibaccarat", **kwargs) -> TableRunner:
    sub = load_preset(preset)
    runner = TableRunner(TableCore(sub, table_id="T1"), journal, autodealer=AutoDealer(seed=7), **kwargs)
    runner.recover_from_journal()
    rules_asked_for(runner.core, sub)  # as shoectl run --submission does
    links = {}
    for role, device in (("shuffler", table.shuffler), ("shoe", table.shoe)):
        profile = get_profile(device.name)
        seed = runner.last_delivered_for(role)
        links[role] = DeviceLink(LoopbackTransport(device), timing=profile.timing, profile_name=profile.name,
                                 **runner.link_options(role), last_delivered=seed[1] if seed else None,
                                 last_delivered_serial=seed[0] if seed else None)
    runner.links = links
    return runner


def run_in_thread(runner: TableRunner) -> threading.Thread:
    def target() -> None:
        try:
            runner.run()
        except BaseException:  # the test reads runner.error
            pass
    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t


def run_to_the_end(runner: TableRunner, timeout: float = 120) -> None:
    """Run ``runner`` until it stops by itself (its limit reached, or an error)."""
    thread = run_in_thread(runner)
    thread.join(timeout)
    assert not thread.is_alive(), "the runner did not stop"


def deal_with_the_edge_monitor(path, preset: str, *, seed: int, rounds: int, worker: str = "thread",
                               threshold: str = "0"):
    """A table on the emulator (``seed``) dealing ``rounds`` into the journal at ``path`` (resumed
    when it holds entries), the edge monitor on its ``worker`` with ``threshold``; returns the
    runner and the monitor, everything closed."""
    from controller.table.edge_monitor import EdgeMonitor

    table = EmulatedTable(seed=seed, speed=INF)
    journal = Journal.open(path, table_id="T1")
    runner = make_runner(table, journal, preset, rounds=rounds)
    monitor = EdgeMonitor(threshold, worker=worker).attach(runner)
    try:
        run_to_the_end(runner)
    finally:
        monitor.close()
        journal.close()
        table.close()
    return runner, monitor
