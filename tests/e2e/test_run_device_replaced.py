"""A device that comes back as another device (a new event epoch: a replacement, a reset that lost
its memory, a new emulator process) through the real path: ``shoectl emulate --table`` in one
process, ``shoectl run --device ...`` in another, both on real ptys.

The emulator is killed with SIGKILL in the middle of a round and a new one is started on the same
ports. (The round is held there by a card the shoe could not read, which waits for a floorperson:
the automated one of ``shoectl run`` leaves it, so the moment of the kill is certain.) The new devices hold no cards: the table must not go on prompting for cards of the lost shoe
(it once did: ``fault_cleared by reconnect``, ``resumed: dealing``, ``DRAW BANKER @46`` forever).
It voids a round in progress and returns its wagers (627a.13(e)), reconciles the lost shoe
(681a.7(d)(1)) and deals a new shoe from the new devices.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal import JournalReader, verify
from controller.journal.errors import NotAJournalError
from firmware_bridge.emulator.table import read_dealt_log

from .journal_checks import RANK, SUIT

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def start_emulator(tmp: Path, dealt_log: Path, *extra: str) -> tuple[subprocess.Popen, dict[str, str]]:
    (tmp / "dev").mkdir(exist_ok=True)
    emu = subprocess.Popen([*SHOECTL, "emulate", "--table", "--seed", "3", "--speed", "max", "--dir", str(tmp / "dev"),
                            "--dealt-log", str(dealt_log), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    first = json.loads(emu.stdout.readline())
    return emu, {d["profile"]: d["port"] for d in first["devices"]}


def entries(journal: Path) -> list:
    if not journal.exists():
        return []
    try:
        with JournalReader.open(journal) as r:
            return list(r.entries())
    except NotAJournalError:  # the table is creating it right now
        return []


def wait_for(journal: Path, done, timeout: float) -> list:
    deadline = time.monotonic() + timeout
    found: list = []
    while time.monotonic() < deadline:
        found = entries(journal)
        if done(found):
            return found
        time.sleep(0.2)
    return found


def card_text(fields: dict) -> str:
    return RANK.get(fields["rank"], str(fields["rank"])) + SUIT[fields["suit"]]


@pytest.mark.slow
@pytest.mark.reg("627a.13(e)", "681a.7(d)(1)")
def test_a_replaced_emulator_voids_the_round_reconciles_and_deals_a_new_shoe(tmp_path: Path) -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a
    round of play, that round shall be void and all wagers shall be returned. A new round shall
    commence after the entire set of cards are reshuffled and placed in the dealing shoe."
    681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the shoe and
    placing them in the discard rack to ensure that no cards are missing." """
    journal = tmp_path / "journal.db"
    emu, ports = start_emulator(tmp_path, tmp_path / "dealt-1.log", "--faults", "misread-at=30")
    run = subprocess.Popen([*SHOECTL, "run", "--device", f"emulated-shuffler@{ports['emulated-shuffler']}",
                            "--device", f"emulated-shoe@{ports['emulated-shoe']}", "--journal", str(journal),
                            "--json", "--seed", "1", "--automated"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    emu2 = None
    try:
        # Kill the devices while a round is held by the misread card at position 30.
        held = wait_for(journal, lambda es: any(e.kind == "fault" and e.payload["fault"] == "misread" for e in es), 60)
        assert any(e.kind == "fault" and e.payload["fault"] == "misread" for e in held)
        emu.send_signal(signal.SIGKILL)
        emu.wait(timeout=10)
        # As udev removes a device's link when it is unplugged: a killed emulator cannot, and its
        # links would point at pty numbers the kernel hands to the next process that asks (another
        # test's terminal), where the table's reconnecting links would write their handshake.
        for port in ports.values():
            Path(port).unlink(missing_ok=True)
        before = entries(journal)
        old_shoe = next(e.payload["shoe"] for e in reversed(before) if e.kind == "shoe_start")
        time.sleep(0.5)
        emu2, ports2 = start_emulator(tmp_path, tmp_path / "dealt-2.log")
        assert ports2 == ports
        after = wait_for(journal, lambda es: any(e.kind == "round_result" and e.shoe_id != old_shoe
                                                 and e.payload["kind"] == "normal" for e in es), 60)
    finally:
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=30)
        for e in (emu, emu2):
            if e is not None:
                if e.poll() is None:
                    e.send_signal(signal.SIGTERM)
                e.communicate(timeout=20)  # waits, and closes its pipes
    assert run.returncode == 143, err[-2000:]  # 128 + SIGTERM after a clean stop
    kinds = [e.kind for e in after]
    assert "device_replaced" in kinds, [(e.kind, e.payload) for e in after[-15:]]
    # Every round of the lost shoe has a result; the one cut short by the loss is void, its wagers
    # returned.
    old = [e for e in after if e.shoe_id == old_shoe]
    started = {e.payload["round"]: e.payload for e in old if e.kind == "round_start"}
    results = {e.payload["round"]: e.payload for e in old if e.kind == "round_result"}
    assert set(started) == set(results)
    last = max(results)
    assert results[last]["kind"] == "void" and "new device" in results[last]["reason"]
    returned = [e.payload for e in old if e.kind == "settlement" and e.round_no == last]
    assert sorted((s["seat"], s["amount"], s["result"]) for s in returned) == sorted(
        (w["seat"], w["amount"], "push") for w in started[last]["wagers"])
    rec = [e.payload for e in old if e.kind == "reconciliation"]
    assert len(rec) == 1
    # The new shoe was dealt from the new devices: the journal's cards of their epoch are exactly
    # what the new shoe delivered.
    replaced = next(e.payload for e in after if e.kind == "device_replaced" and e.payload["device_role"] == "shoe")
    new_cards = [card_text(e.payload["fields"]) for e in after if e.kind == "input.device"
                 and e.device_epoch == replaced["epoch"] and e.payload["event"] == "CARD_READ"]
    dealt = [str(d.card) for d in read_dealt_log(tmp_path / "dealt-2.log")]
    assert new_cards and new_cards == dealt[:len(new_cards)]
    assert verify(journal).ok
