"""What the end-to-end tests read out of a journal and check in it: the cards it holds
(``journal_cards``, in the notation of ``RANK`` and ``SUIT``), its integrity against the emulated
shoe's dealt log (``check_integrity``) and its entries shoe by shoe (``split_by_shoe``)."""
from __future__ import annotations

from pathlib import Path

from benchmarks.soak_checks import check_placed
from controller.journal import JournalReader, verify
from controller.journal.replay import replay
from firmware_bridge.emulator.table import read_dealt_log

SUIT = {0: "C", 1: "D", 2: "H", 3: "S"}
RANK = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}


def journal_cards(path: Path) -> list[str]:
    """Every card read the journal at ``path`` holds, in order ("?" for a card the shoe could not read)."""
    with JournalReader.open(path) as r:
        out = []
        for e in r.entries(kinds=("input.device",)):
            if e.payload["event"] == "CARD_READ":
                f = e.payload["fields"]
                out.append("?" if f["rank"] == 0xFF else RANK.get(f["rank"], str(f["rank"])) + SUIT[f["suit"]])
        return out


def check_integrity(tmp: Path, journal: Path) -> list[dict]:
    """The journal's cards are the dealt log's (``tmp / "dealt.log"``), its chain verifies, every
    card out of an ended shoe is placed on record and every wager is settled exactly once; returns
    its replayed rounds."""
    dealt = [str(d.card) for d in read_dealt_log(tmp / "dealt.log")]
    assert journal_cards(journal) == dealt
    assert verify(journal).ok
    check_every_card_placed(journal)
    with JournalReader.open(journal) as r:
        rounds = [d for d in replay(r.entries()) if d["type"] == "round"]
    for d in rounds:
        staked = sorted((w["seat"], w["kind"], w["amount"]) for w in d["wagers"])
        settled = sorted((s["seat"], s["kind"], s["amount"]) for s in d["settlements"])
        assert settled == staked, d
    return rounds


def check_every_card_placed(journal: Path) -> None:
    """Each shoe that ended: every card that left it is placed on record by then, once (the
    soaks' ``check_placed``)."""
    with JournalReader.open(journal) as r:
        check_placed([{"kind": e.kind, "shoe_id": e.shoe_id, "payload": e.payload} for e in r.entries()])


def split_by_shoe(entries: list[tuple[str, dict]]) -> list[list[tuple[str, dict]]]:
    """(kind, payload) entries split into shoes, each from its ``shoe_start`` (those before the
    first shoe dropped)."""
    shoes: list[list[tuple[str, dict]]] = []
    for kind, payload in entries:
        if kind == "shoe_start":
            shoes.append([])
        if shoes:
            shoes[-1].append((kind, payload))
    return shoes
