"""Baccarat roadmaps (the scoreboards of a baccarat table) for one shoe: bead plate, big road, big
eye boy, small road and cockroach pig, computed purely (``roads``) and rendered as text, SVG or
PNG (``render``); the "ask" indicators (``ask``). See docs/roadmaps.md for every rule and convention.

``compute(results_from_rounds(rounds)).to_json()`` is the stable JSON of ``shoectl roadmap --json``.
"""
from controller.roadmaps.roads import (
    BigRoadEntry,
    Result,
    Roadmaps,
    big_eye_boy,
    big_road,
    bead_plate,
    cockroach_pig,
    compute,
    derived_road,
    parse_results,
    result_from_round,
    results_from_rounds,
    small_road,
)
from controller.roadmaps.render import fold, render_png, render_svg, render_text
from controller.roadmaps.ask import AskIndicators, ask_indicators, ask_mark

__all__ = [
    "AskIndicators", "ask_indicators", "ask_mark",
    "BigRoadEntry", "Result", "Roadmaps",
    "bead_plate", "big_eye_boy", "big_road", "cockroach_pig", "compute", "derived_road", "fold",
    "parse_results", "render_png", "render_svg", "render_text", "result_from_round", "results_from_rounds",
    "small_road",
]
