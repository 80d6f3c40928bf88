"""Journal records of whole rounds as a table writes them (the fields the readers use), for tests
that build a journal by hand."""
from __future__ import annotations

from controller.journal import Record


def round_records(shoe: str, n: int, kind: str = "normal", outcome: str | None = "banker", *,
                  player_pair: bool = False, banker_pair: bool = False, rack: bool = True) -> list[Record]:
    """Round ``n`` of ``shoe``: its start and its result (``kind`` normal, simulated or void; a
    void has no outcome), then its discard rack unless ``rack`` is False or the round is void."""
    start = Record("round_start", {"kind": kind, "round": n, "wagers": []}, shoe=shoe, round=n)
    if kind == "void":
        return [start, Record("round_result", {"kind": "void", "reason": "misdeal"}, shoe=shoe, round=n)]
    hand = {"cards": [], "total": 0}
    result = Record("round_result", {"kind": kind, "outcome": outcome, "player": hand, "banker": hand, "dealt": [],
                                     "player_pair": player_pair, "banker_pair": banker_pair}, shoe=shoe, round=n)
    return [start, result, *([Record("discard_rack", {"cards": []}, shoe=shoe, round=n)] if rack else [])]
