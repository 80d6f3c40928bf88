"""Random fault mixes for the fault soak (``python -m benchmarks.soak_faults --random N``).

The soak's fixed mixes (``benchmarks.soak_faults.MIXES``) each hold one or two faults that found a
defect once. These mixes combine faults no one thought to put together; ``random_mixes(n, seed)``
gives the same ``n`` mixes for the same seed, so that a defect found this way is run again with
``--random N --random-seed S``. Each mix draws, independently:

- its lines unplugged again and again (half the mixes), every 250-600 ms for 50-150 ms;
- line noise (two mixes in five), on the host's bytes too in half of those; at most 0.2 % of the
  bytes corrupted where the lines are also unplugged (a line both very noisy and unplugged deals
  a round every 20 s or so: slow, not stuck; docs/hardening.md);
- each device and dealer fault (a quarter of the mixes each) at a random count or position:
  ``jam-at``, ``door-open-at``, ``reset-at``, ``face-up-at``, ``cover-at``, ``dealer-extra-at``,
  ``dealer-expose-at``;
- one prompt refused once (half the mixes): ``refuse-display`` with a prompt's first word; one
  command refused once (a quarter): ``refuse-command`` (SHUFFLE, DELIVER, the gate's, RESET, DISPLAY);
- a dealer who misses one prompt that asks for something done (a quarter): ``dealer-miss`` with
  the prompt's first word. The dealer reads the display again a moment later; a missed UNLOAD
  leaves the last shoe's cards in the shoe (an automatic shoe refuses the next stack until it is
  emptied; at the two-device table the dealer takes them out at the LOAD);
- its Rules Submission (one of the four presets), and an automatic shoe (three mixes in ten).

Left out, as the fixed mixes leave them out: a misread card (it holds the table until a
floorperson enters it; the automated one does not) and a card missing from or added to every
shuffle (the automated floorperson closes the table after three reshuffles).
"""
from __future__ import annotations

import random

from firmware_bridge.emulator.faults import REFUSABLE_COMMANDS

AUTOSHOE = "emulated-autoshoe"  # a shoe with its shuffler built in (681a.5(h)): one device, one line
SUBMISSIONS = ("minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat")
PROMPT_WORDS = ("UNLOAD", "SHUFFLING", "OFFER", "CUT", "COVER", "LOAD", "BURN", "PLACE", "DRAW", "SQUEEZE", "HOUSE",
                "CLOSE")
DEALER_WORDS = ("UNLOAD", "CUT", "COVER", "LOAD", "BURN", "DRAW", "CLOSE")  # the prompts that ask the dealer to act
# Each device or dealer fault with the range its count or stack position is drawn from.
COUNTED_FAULTS = (("jam-at", 1, 150), ("door-open-at", 1, 150), ("reset-at", 1, 200), ("face-up-at", 5, 300),
                  ("cover-at", 30, 200), ("dealer-extra-at", 1, 80), ("dealer-expose-at", 1, 200))


def random_mix(rng: random.Random) -> tuple[str, str, str | None]:
    """One mix: (its faults as ``--faults`` text without the seed, its Rules Submission, its shoe
    profile or None for the two-device table)."""
    items: list[str] = []
    unplugged = rng.random() < 0.5
    if unplugged:
        items.append(f"unplug-every={rng.choice((250, 300, 400, 600))}ms,unplug-for={rng.choice((50, 100, 150))}ms")
    if rng.random() < 0.4:
        corrupt = rng.choice((0.001, 0.002) if unplugged else (0.001, 0.002, 0.005))
        items.append(f"corrupt={corrupt},drop={corrupt / 4},dup={corrupt * 2}")
        if rng.random() < 0.5:
            items.append("both-ways=1")
    items += [f"{name}={rng.randint(least, most)}" for name, least, most in COUNTED_FAULTS if rng.random() < 0.25]
    if rng.random() < 0.5:
        items.append(f"refuse-display={rng.choice(PROMPT_WORDS)}")
    if rng.random() < 0.25:
        items.append(f"refuse-command={rng.choice(REFUSABLE_COMMANDS)}")
    if rng.random() < 0.25:
        items.append(f"dealer-miss={rng.choice(DEALER_WORDS)}")
    submission = rng.choice(SUBMISSIONS)
    shoe_profile = AUTOSHOE if rng.random() < 0.3 else None
    return ",".join(items) or "dup=0.001", submission, shoe_profile


def random_mixes(n: int, seed: int) -> tuple[tuple[str, str, str | None], ...]:
    """``n`` mixes drawn from ``seed`` (the same ones for the same seed)."""
    rng = random.Random(seed)
    return tuple(random_mix(rng) for _ in range(n))
