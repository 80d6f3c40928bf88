"""The simulator's floor: the straightforward Punto Banco loop anyone would write first.

Per shoe: 8 decks of card values shuffled with ``random.shuffle``, cut at a random legal
position, the second cover card 14-16 cards from the bottom, one card burned; rounds dealt by list
indexing with the tableau (631a.11) written as ifs until the cover card comes out. It counts
Banker, Player and Tie only: no pairs, no Dragon 7 or Panda 8, no wager valued. ``shoectl
simulate`` is measured against it (benchmarks/bench_simulate.py), which does all of that and more.

``python -m benchmarks.floor_loop SHOES SEED`` prints ``rounds seconds`` (for whole-process runs).
"""
from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable


def floor_loop(shoes: int, seed: int, decks: int = 8,
               shuffle: Callable[[random.Random, list], None] | None = None) -> tuple[int, int, int]:
    """Deal ``shoes`` shoes; return the Banker, Player and Tie counts. ``shuffle(rng, cards)``: in
    place of ``rng.shuffle(cards)``, one making the same draws and swaps (the same counts)."""
    rng = random.Random(seed)
    deck = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0] * 4
    base = deck * decks
    banker = player = tie = 0
    for _ in range(shoes):
        cards = base[:]
        if shuffle is None:
            rng.shuffle(cards)
        else:
            shuffle(rng, cards)
        cut = rng.randint(10, len(cards) - 10)
        cards = cards[cut:] + cards[:cut]
        cover = len(cards) - rng.randint(14, 16)
        i = 1  # the burned card
        while i <= cover:
            p = (cards[i] + cards[i + 2]) % 10
            b = (cards[i + 1] + cards[i + 3]) % 10
            i += 4
            if p < 8 and b < 8:
                if p <= 5:
                    third = cards[i]
                    i += 1
                    p = (p + third) % 10
                    if b <= 2 or (b == 3 and third != 8) or (b == 4 and 2 <= third <= 7) \
                            or (b == 5 and 4 <= third <= 7) or (b == 6 and 6 <= third <= 7):
                        b = (b + cards[i]) % 10
                        i += 1
                elif b <= 5:
                    b = (b + cards[i]) % 10
                    i += 1
            if b > p:
                banker += 1
            elif p > b:
                player += 1
            else:
                tie += 1
    return banker, player, tie


if __name__ == "__main__":
    shoes, seed = int(sys.argv[1]), int(sys.argv[2])
    t0 = time.perf_counter()
    counts = floor_loop(shoes, seed)
    print(sum(counts), time.perf_counter() - t0)
