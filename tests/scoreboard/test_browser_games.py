"""The other games' pages and the floor page in a real browser (headless Chromium, ``tests/
scoreboard/browser.py``), each checked in the DOM against ``state.json``:

- EZ Baccarat: a journal ending on a round with a Dragon 7 (and one on a Panda 8) shows the tag,
  the shoe's Dragon 7 / Panda 8 counts, the state in words and the limits and paytable panel (the
  Rules Submission journaled at opening; the Panda 8 one with table limits, the Dragon 7 one
  without: "Limits: ask the dealer");
- 21 Baccarat, in Chinese: the bonus card of the last round, the bonus paytable by its ranks'
  labels (no English word on the zh page);
- the floor page ``/`` over a real Mosquitto, two tables fed by ``shoectl feed``: each tile's
  state and last result."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from controller.journal import Journal, JournalReader, Record, kinds
from controller.rules.submission import load_preset, parse_submission
from tests.scoreboard.browser import chrome
from tests.scoreboard.serving import floor_fed, get_json, journal_view, serving
from tests.scoreboard.runs import copy, shoectl_run

PAGE_JS = """
var facts = {};
document.querySelectorAll('#last-round [data-fact]').forEach(function (t) { facts[t.dataset.fact] = t.textContent; });
var pays = {};
document.querySelectorAll('#rules [data-wager]').forEach(function (l) { pays[l.dataset.wager] = l.querySelector('.v').textContent; });
var ranks = {};
document.querySelectorAll('#rules [data-rank]').forEach(function (l) {
  ranks[l.dataset.rank] = [l.querySelector('.k').textContent, l.querySelector('.v').textContent]; });
var terms = [];
document.querySelectorAll('#rules [data-term]').forEach(function (l) {
  terms.push([l.dataset.term, l.querySelector('.k').textContent, l.querySelector('.v').textContent]); });
var limits = {};
document.querySelectorAll('#rules [data-limit]').forEach(function (l) {
  var k = l.querySelector('.k'), v = l.querySelector('.v');
  limits[l.dataset.limit] = k ? [k.textContent, v.textContent] : l.textContent; });
var count = function (id) { var n = document.getElementById(id); return n ? n.textContent : null; };
var box = document.getElementById('rules').getBoundingClientRect(), clipped = [];
document.querySelectorAll('#rules h2, #rules .line, #rules .game').forEach(function (l) {
  var r = l.getBoundingClientRect();
  if (r.bottom > box.bottom + 0.5 || r.right > box.right + 0.5) clipped.push(l.textContent); });
return {version: document.body.dataset.version, state: document.getElementById('state').textContent,
        state_name: document.getElementById('state').dataset.state, facts: facts, pays: pays, ranks: ranks, limits: limits, terms: terms,
        clipped: clipped,
        dragon7: count('count-dragon7'), panda8: count('count-panda8'),
        cards: Array.prototype.slice.call(document.querySelectorAll('#last-round .card')).map(function (c) {
          return [c.dataset.card, c.dataset.to]; }),
        text: document.body.innerText};
"""


def _wait_for(driver, script: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not driver.execute_script(script):
        assert time.monotonic() < deadline, f"timed out waiting for: {script}"
        time.sleep(0.05)


def _journal_ending_on(tmp: Path, source: Path, preset: str, wanted, limits: dict[str, Any] | None = None) -> Path:
    """A journal of ``preset``'s Rules Submission (with ``limits`` as its ``[limits]``, if given)
    and ``source``'s entries but its own submission records up to the end of the first round whose replayed document satisfies
    ``wanted``."""
    from controller.journal.replay import replay

    with JournalReader.open(source) as reader:
        entries = list(reader.entries())
    upto = None
    consumed = [0]

    def tracked():
        for e in entries:
            consumed[0] = e.seq
            yield e
    for doc in replay(tracked()):
        if doc["type"] == "round" and wanted(doc):
            upto = consumed[0]
            break
    assert upto is not None, "no such round in the journal"
    path = tmp / f"{preset}-{upto}.db"
    with Journal.open(path, table_id=entries[0].table_id) as journal:
        journal.append_batch([Record(kinds.SUBMISSION, _submission(preset, limits)),
                              *(copy(e) for e in entries if e.seq <= upto and e.kind != kinds.SUBMISSION)])
    return path


def _submission(preset: str, limits: dict[str, Any] | None) -> dict[str, Any]:
    """``preset``'s Rules Submission as journaled, with ``limits`` (checked by the parser)."""
    d = load_preset(preset).to_dict()
    if limits is None:
        return d
    source = d.pop("source")
    return parse_submission({**d, "limits": limits}, source).to_dict()


def _page(driver, server, lang: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The table's page in ``lang`` once drawn, and its state.json."""
    state = get_json(server, f"/tables/T1/state.json?lang={lang}")
    driver.get(f"{server.url}/tables/T1?lang={lang}")
    _wait_for(driver, f"return document.body.dataset.version === '{state['version']}'")
    return driver.execute_script(PAGE_JS), state


def _check_words_and_pays(shown: dict[str, Any], state: dict[str, Any]) -> None:
    assert shown["state"] == state["state"]["text"] and shown["state_name"] == state["state"]["name"]
    words = state["labels"]
    if state["limits"] is None:
        assert shown["limits"] == {"": words["no_limits"]}  # "Limits: ask the dealer"
    else:  # each limit under its label, as state.json writes it
        assert shown["limits"] == {k: [words[k], v["text"]] for k, v in state["limits"].items()}
    assert shown["pays"] == state["rules"]["paytable"] and shown["pays"]
    # the commissions, EZ Baccarat's push, House Money's odds, as the table settles by (a money review)
    assert shown["terms"] == [[t["key"], t["label"], t["text"]] for t in state["rules_terms"]] and shown["terms"]
    # every line inside the panel: with table limits the paytable and the commission were cut off
    # below it, in the page's text all the same (a review of the scoreboard)
    assert shown["clipped"] == [], shown["clipped"]
    for fact in state["last_round_facts"]:
        assert shown["facts"][fact["key"]].startswith(fact["text"]), fact
    assert set(shown["facts"]) == {f["key"] for f in state["last_round_facts"]}
    assert words[f"state.{state['state']['name']}"] in shown["text"]


# a limit on every wager, as a site's submission gives (docs/examples/minibaccarat-limits.toml and
# EZ Baccarat's own): the panel's longest (a review of the scoreboard found its paytable cut off)
EZ_LIMITS = {"banker": {"min": 2500, "max": 500000}, "player": {"min": 2500, "max": 500000},
             "tie": {"min": 500, "max": 50000}, "player_pair": {"min": 500, "max": 25000},
             "banker_pair": {"min": 500, "max": 25000}, "dragon7": {"min": 500, "max": 10000},
             "panda8": {"min": 500, "max": 10000}, "table_max": 1000000}


@pytest.fixture(scope="module")
def ez_journal(tmp_path_factory) -> Path:
    """30 rounds of EZ Baccarat; seed 8 deals two Dragon 7s and a Panda 8."""
    return shoectl_run(tmp_path_factory.mktemp("ez"), "--submission", "ez-baccarat", "--rounds", "30", "--seed", "8")


def test_ez_baccarat_shows_dragon7_and_panda8_and_its_paytable(tmp_path, ez_journal) -> None:
    with chrome(tmp_path) as driver:
        for flag in ("dragon7", "panda8"):
            journal = _journal_ending_on(tmp_path, ez_journal, "ez-baccarat", lambda d: d.get(flag),
                                         EZ_LIMITS if flag == "panda8" else None)
            with serving(journal) as server:
                shown, state = _page(driver, server, "en")
            assert state["last_round"][flag] and flag in shown["facts"]
            assert shown["facts"][flag] == state["labels"][flag]  # "Dragon 7" / "Panda 8"
            assert (shown["dragon7"], shown["panda8"]) == (str(state["shoe_so_far"]["dragon7"]),
                                                           str(state["shoe_so_far"]["panda8"]))
            _check_words_and_pays(shown, state)
            assert state["rules"]["paytable"]["dragon7"] == "40:1"
            assert (state["limits"] is None) == (flag == "dragon7")


def test_21_baccarat_shows_the_bonus_card_and_its_ranks_in_chinese(tmp_path) -> None:
    dealt = shoectl_run(tmp_path, "--submission", "21-baccarat", "--rounds", "12", "--seed", "3")
    journal = _journal_ending_on(tmp_path, dealt, "21-baccarat",
                                 lambda d: any(c["to"].endswith("_bonus") for c in d["cards"]))
    with chrome(tmp_path) as driver, serving(journal) as server:
        shown, state = _page(driver, server, "zh")
    bonus = [(f["card"], f["to"]) for f in state["last_round_facts"] if f["key"] == "bonus_card"]
    assert bonus and all([card, to] in shown["cards"] for card, to in bonus)
    assert shown["facts"]["bonus_card"] == f"{state['labels']['bonus_card']} {bonus[-1][0]}"  # the last tag
    _check_words_and_pays(shown, state)
    words = state["labels"]
    assert shown["ranks"] and {k: v for k, (_, v) in shown["ranks"].items()} == state["rules"]["bonus_paytable"]
    assert all(label == words[f"rank.{rank}"] for rank, (label, _) in shown["ranks"].items())
    english = [w for w in ("bonus", "pair", "flush", "straight", "kind", "banker", "player", "tie", "round", "shoe")
               if w in shown["text"].lower()]
    assert english == [], english


TILES_JS = """return Array.prototype.slice.call(document.querySelectorAll('.tile')).map(function (t) {
  return {table: t.dataset.table, state: t.querySelector('.state').dataset.state,
          text: t.querySelector('.state').textContent, last: t.querySelector('.last b').dataset.result,
          big: t.querySelectorAll('[data-road="big"] .cell').length}; });"""


@pytest.mark.slow
def test_the_floor_page_over_mosquitto_shows_each_tables_state_and_last_result(tmp_path, mosquitto) -> None:
    letter = {"banker": "B", "player": "P", "tie": "T"}
    with floor_fed(tmp_path, mosquitto, {"T1": 4, "T2": 2}) as (server, journals, _), chrome(tmp_path) as driver:
        want = {t: journal_view(j) for t, j in journals.items()}
        expected = [{"table": t, "state": w["state"]["name"], "text": w["state"]["text"],
                     "last": letter[w["last_round"]["outcome"]], "big": sum(map(len, w["roads"]["big_road"]))}
                    for t, w in want.items()]
        driver.get(f"{server.url}/")
        deadline = time.monotonic() + 30
        while (tiles := driver.execute_script(TILES_JS)) != expected:
            assert time.monotonic() < deadline, json.dumps(tiles)
            time.sleep(0.1)
