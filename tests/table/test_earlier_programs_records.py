"""An earlier program's genuine journal decided again by this one (an upgrade review ran the
programs of every half day since 2026-11-29): records whose words were mended since, and a record
kind added since, must not read as a forger's; the same changes where this very program wrote the
journal, or where the decision itself differs, still do.

Each journal here is a current table's, rewritten as the program of that day wrote it (the words
and records of its journal, run at the commit named) and re-chained: exactly the bytes that
program journaled for those inputs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_run import dealt_journal, run_captured

from controller.signature import signature_label
from controller.table.dealing import TWENTYONE_CARD_IN_ERROR
from controller.table.earlier_programs import EARLIER_WORDS, EarlierPrograms
from tests.tampering import rechain, renumber, rewrite, rows

SEQ, KIND, ROUND, PAYLOAD = 0, 2, 5, 10  # columns of a row of ``entries``


def shoectl(*args: str) -> SimpleNamespace:
    code, out, err = run_captured(*args)
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


def as_written(src: Path, tmp_path: Path, change, *, then: bool = True) -> Path:
    """``src`` with its rows changed by ``change`` and re-chained; ``then``: every start as a
    program of before 2026-12-06 wrote it (neither signature nor driver), else as this one did."""
    path = tmp_path / "then.db"
    shutil.copy(src, path)
    rs = [list(r) for r in rows(path)]
    for row in rs:
        if then and row[KIND] == "controller_started":
            payload = json.loads(row[PAYLOAD])
            payload.pop("signature", None)
            payload.pop("driver", None)
            row[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    rewrite(path, rechain([tuple(r) for r in renumber(change(rs))]))
    assert shoectl("journal", "verify", str(path)).returncode == 0
    return path


OLD_WORDS = {
    # 3afbb0a6 (2026-12-05 14:36) took the card's name out of the sentence
    "midibaccarat": ("irregularity", "next-hand-first-card",
                     "Card {card} was drawn in error and not disclosed: it is held, undisclosed, as the first "
                     "card of the next hand."),
    # 71e8b574 (2026-12-05 15:26) named the table's reading instead of 681a.7(c)
    "21-baccarat": ("discard", None,
                    "21 Baccarat: a card drawn when none was called for goes to the discard rack, as a burn card "
                    "(681a.7(c)); it may have been seen while wagers could be placed"),
}


@pytest.fixture(scope="module")
def extra_card_journals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("extra")
    return {game: dealt_journal(folder / f"{game}.db", "--submission", game, "--rounds", "12", "--seed", "12",
                                "--faults", "dealer-extra-at=6", "--no-edge-monitor") for game in OLD_WORDS}


def in_old_words(game: str, *, action: str | None = None):
    kind, wanted, words = OLD_WORDS[game]
    reworded: list[int] = []

    def change(rs: list) -> list:
        for row in rs:
            payload = json.loads(row[PAYLOAD])
            if row[KIND] == kind and (wanted is None or payload.get("action") == wanted) and "reason" in payload:
                payload["reason"] = words.format(card=payload.get("card"))
                payload.pop("disclosed", None)  # discard's key of 2026-12-07
                if action is not None:
                    payload["action"] = action
                row[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
                reworded.append(row[SEQ])
        assert reworded, f"no {kind} record to reword"
        return rs
    return change


@pytest.mark.parametrize("game", sorted(OLD_WORDS))
def test_a_decision_whose_sentence_was_reworded_since_is_the_same_decision(
        extra_card_journals: dict[str, Path], tmp_path: Path, game: str) -> None:
    """A review ran the programs of 2026-12-01 and 2026-12-02 with an extra card drawn
    (dealer-extra-at): their journals failed `audit decisions` at that card's record, "reason:
    journal 'Card KD was drawn in error ...', decided 'A card was drawn in error ...'", and a table
    that continues such a journal (which it does) writes one that fails for ever. The decision
    (action, card, clause, position) is the same; only its sentence was mended, as a refusal's
    words are. The line before the verdict says so."""
    path = as_written(extra_card_journals[game], tmp_path, in_old_words(game))
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 0, done.stdout
    assert (f"{path}: records written by another program say in other words what this one decides alike, compared "
            f"as this one's: {OLD_WORDS[game][0]} (1)") in done.stdout.splitlines()


def test_other_words_in_this_very_programs_journal_or_another_decision_are_differences(
        extra_card_journals: dict[str, Path], tmp_path: Path) -> None:
    """This program's own start (its signature) is held to its words; and under an earlier
    program's start, words do not cover another decision (the action)."""
    journal = extra_card_journals["midibaccarat"]
    own = as_written(journal, tmp_path, in_old_words("midibaccarat"), then=False)
    done = shoectl("audit", "decisions", str(own))
    assert done.returncode == 1 and "the journal's irregularity record is not what the table decides" in done.stdout
    other = as_written(journal, tmp_path, in_old_words("midibaccarat", action="discard"))
    done = shoectl("audit", "decisions", str(other))
    assert done.returncode == 1 and "the journal's irregularity record is not what the table decides" in done.stdout


def _dealt(factory: pytest.TempPathFactory, *options: str) -> Path:
    """A journal of the built-in emulated table, without the edge monitor, in a folder of its own."""
    return dealt_journal(factory.mktemp("dealt") / "j.db", *options, "--no-edge-monitor")


@pytest.fixture(scope="module")
def early_cover_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _dealt(tmp_path_factory, "--submission", "minibaccarat", "--shoes", "2", "--seed", "13",
                  "--faults", "cover-at=40")


def test_an_early_cover_card_journaled_before_cover_card_early_existed_decides_again(
        early_cover_journal: Path, tmp_path: Path) -> None:
    """Every program before 0cdf9f88 (2026-12-05 20:29) ended a shoe whose cover card came out early
    (cover-at) without a ``cover_card_early`` record: the kind did not exist. A review's journals of
    2026-11-29 to 2026-12-05 (every game, `--faults cover-at=40`) all failed `audit decisions`:
    "deciding again makes a cover_card_early record that the journal does not hold"."""
    def change(rs: list) -> list:
        kept = [r for r in rs if r[KIND] != "cover_card_early"]
        assert len(kept) < len(rs), "no early cover card"
        return kept

    path = as_written(early_cover_journal, tmp_path, change)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 0, done.stdout
    n = sum(1 for r in rows(early_cover_journal) if r[KIND] == "cover_card_early")
    assert (f"{path}: an earlier program did not write records of kinds added since, passed over: "
            f"cover_card_early ({n})") in done.stdout.splitlines()


@pytest.mark.parametrize("how", ["this-programs-start", "one-of-two-left-out"])
def test_an_early_cover_card_left_out_by_a_program_that_writes_them_is_a_difference(
        early_cover_journal: Path, tmp_path: Path, how: str) -> None:
    """Under this very program's start, or where the same start's journal holds another record of
    that kind (one program writes them all or none), a missing ``cover_card_early`` is a forger's."""
    def change(rs: list) -> list:
        early = [i for i, r in enumerate(rs) if r[KIND] == "cover_card_early"]
        assert len(early) >= (2 if how == "one-of-two-left-out" else 1), "too few early cover cards"
        del rs[early[0]]
        return rs

    path = as_written(early_cover_journal, tmp_path, change, then=how == "one-of-two-left-out")
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1, done.stdout
    if how == "this-programs-start":
        assert "deciding again makes a cover_card_early record that the journal does not hold" in done.stdout
    else:
        assert "where at entry" in done.stdout and "one program writes them all or none" in done.stdout


def _dump(p: dict) -> str:
    return json.dumps(p, sort_keys=True, separators=(",", ":"))


@pytest.fixture(scope="module")
def after_round_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A card drawn in error after a round, disclosed: 627a.13(c)(1), it and one more to the rack."""
    journal = _dealt(tmp_path_factory, "--rounds", "3", "--seed", "1", "--faults", "dealer-extra-at=10,dealer-expose-at=12")
    assert [json.loads(r[PAYLOAD])["reason"] for r in rows(journal) if r[KIND] == "discard"] == [
        "627a.13(c)(1)", "627a.13(c)(1)"]
    return journal


def _discard_clause(clause: str):
    def change(rs: list) -> list:
        for row in rs:
            p = json.loads(row[PAYLOAD])
            if row[KIND] == "discard" and p.get("reason") == "627a.13(c)(1)":
                p["reason"] = clause
                p.pop("disclosed", None)
                row[PAYLOAD] = _dump(p)
        return rs
    return change


@pytest.mark.parametrize("then", [True, False], ids=["unsigned", "another-programs-signature"])
def test_a_discards_reason_names_its_rule_and_is_not_words_an_earlier_program_put_otherwise(
        after_round_journal: Path, tmp_path: Path, then: bool) -> None:
    """A discard's reason is the rule applied ("627a.13(c)(1)"): made "(c)(2)", the other procedure
    a Rules Submission designates, it passed as "other words" under an earlier program's start (a
    review of the allowance). Only an earlier program's known words for the same rule pass."""
    def change(rs: list) -> list:
        if not then:
            for row in rs:
                if row[KIND] == "controller_started":
                    p = json.loads(row[PAYLOAD])
                    p["signature"] = "sha256:" + "0" * 64
                    row[PAYLOAD] = _dump(p)
        return _discard_clause("627a.13(c)(2)")(rs)

    path = as_written(after_round_journal, tmp_path, change, then=then)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1 and "the journal's discard record is not what the table decides" in done.stdout


def test_a_start_inserted_after_this_programs_own_does_not_unlock_other_words(
        after_round_journal: Path, tmp_path: Path) -> None:
    """An unsigned start inserted into this program's own journal, before an irregularity whose
    words were changed: "no start after [this program's] is an earlier program's" (a review: it let
    the reasons of the records after it read as another program's words)."""
    def change(rs: list) -> list:
        for row in rs:
            p = json.loads(row[PAYLOAD])
            if row[KIND] == "irregularity":
                p["reason"] = "Other words for the same decision."
                row[PAYLOAD] = _dump(p)
        at = next(i for i, r in enumerate(rs) if r[KIND] == "irregularity") - 1
        start = list(next(r for r in rs if r[KIND] == "controller_started"))
        p = json.loads(start[PAYLOAD])
        p.pop("signature")
        p.pop("driver", None)
        p.update(state="betting", replayed=sum(1 for r in rs[:at] if r[KIND].startswith("input.")))
        start[PAYLOAD], start[1], start[4] = _dump(p), rs[at][1], rs[at][4]
        return rs[:at] + [start] + rs[at:]

    path = as_written(after_round_journal, tmp_path, change, then=False)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1 and "the journal's irregularity record is not what the table decides" in done.stdout, \
        done.stdout


def test_a_card_dealt_after_a_round_journaled_with_no_round_by_a_program_of_before_2026_12_05_decides_again(
        after_round_journal: Path, tmp_path: Path) -> None:
    """Programs before fda1a93d (2026-12-05 21:25) journaled the irregularity of a card dealt after a
    round, and its discards, with no round (a review ran them: "column round_no: journal null,
    decided 2"); now they are that round's. The same records lacking it under this program's start
    are a difference."""
    def change(rs: list) -> list:
        for row in rs:
            if row[KIND] in ("irregularity", "discard") and row[ROUND] is not None:
                row[ROUND] = None
        return rs

    path = as_written(after_round_journal, tmp_path, change)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 0, done.stdout
    assert (f"{path}: records written by an earlier program name no round for a card dealt after one, compared "
            "without it: discard (2); irregularity (1)") in done.stdout.splitlines()
    own = as_written(after_round_journal, tmp_path, change, then=False)
    done = shoectl("audit", "decisions", str(own))
    assert done.returncode == 1 and "column round_no: journal null, decided" in done.stdout, done.stdout


@pytest.fixture(scope="module")
def face_up_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A card found face up while round 3 is dealt (627a.13(d)): its irregularity is round 3's."""
    return _dealt(tmp_path_factory, "--submission", "minibaccarat", "--rounds", "6", "--seed", "4",
                  "--faults", "face-up-at=12")


def test_an_irregularity_inside_a_round_stripped_of_its_round_is_a_difference(
        face_up_journal: Path, tmp_path: Path) -> None:
    """Only a card dealt in error after a round's end was journaled with no round (fda1a93d,
    2026-12-05 21:25); every program journaled a card found face up while a round is dealt with
    that round. Its round taken away passed as an earlier program's (a review of the allowance)."""
    def change(rs: list) -> list:
        hit = [r for r in rs if r[KIND] == "irregularity" and r[ROUND] is not None
               and json.loads(r[PAYLOAD])["clause"] == "627a.13(d)"]
        assert hit, "no face-up card in a round"
        for r in hit:
            r[ROUND] = None
        return rs

    path = as_written(face_up_journal, tmp_path, change)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1 and "column round_no: journal null, decided" in done.stdout, done.stdout


def test_a_held_card_named_627a13a_by_a_version_2_program_for_a_simulated_rounds_card_is_a_difference(
        face_up_journal: Path, tmp_path: Path) -> None:
    """The first evening's program (schema version 1) named 627a.13(a) in every held_card_used; a
    version-2 journal saying so for a card that opens a simulated round (627a.13(d)) is not one."""
    def change(rs: list) -> list:
        hit = False
        for r in rs:
            if r[KIND] == "held_card_used":
                p = json.loads(r[PAYLOAD])
                hit = hit or p["clause"] != "627a.13(a)"
                p["clause"] = "627a.13(a)"
                r[PAYLOAD] = _dump(p)
        assert hit, "no held card of another clause"
        return rs

    path = as_written(face_up_journal, tmp_path, change)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1 and "the journal's held_card_used record is not what the table decides" in done.stdout


SIGNED_ELSEWHERE = {"version": "0.1.0", "replayed": 0, "state": "closed", "signature": "sha256:" + "1" * 64}


@pytest.mark.parametrize(("kind", "journaled", "decided", "version_1", "passes"), [
    # an irregularity's reason is words: its action, clause, card and position are the decision
    ("irregularity", {"action": "next-hand-first-card", "clause": "627a.13(a)", "card": "KD",
                      "reason": "Card KD was drawn in error ..."},
     {"action": "next-hand-first-card", "clause": "627a.13(a)", "card": "KD", "reason": "A card was drawn ..."},
     False, True),
    # a void round's cause, a floorperson's words: never other words (a review rewrote one as 627a.13(e))
    ("round_result", {"round": 4, "kind": "void", "reason": "627a.13(e): insufficient cards", "cards": []},
     {"round": 4, "kind": "void", "reason": "misread card damaged", "cards": []}, False, False),
    ("shoe_restarted", {"reason": "627a.13(e)"}, {"reason": "misread card damaged"}, False, False),
    ("fault", {"fault": "misread", "reason": "card at position 33"},
     {"fault": "misread", "reason": "card at position 20"}, False, False),
    # a discard's rule: only an earlier program's known words for the same rule
    ("discard", {"card": "5H", "position": 9, "reason": "627a.13(c)(2)"},
     {"card": "5H", "position": 9, "reason": "627a.13(c)(1)"}, False, False),
    ("discard", {"card": "5H", "position": 9, "reason": next(iter(EARLIER_WORDS))[1]},
     {"card": "5H", "position": 9, "reason": TWENTYONE_CARD_IN_ERROR}, False, True),
    # the first evening's program named 627a.13(a) for every held card; no later one did
    ("held_card_used", {"card": "5H", "clause": "627a.13(a)"}, {"card": "5H", "clause": "627a.13(d)"}, True, True),
    ("held_card_used", {"card": "5H", "clause": "627a.13(a)"}, {"card": "5H", "clause": "627a.13(d)"}, False, False),
    ("held_card_used", {"card": "5H", "clause": "627a.13(b)"}, {"card": "5H", "clause": "627a.13(d)"}, True, False),
])
def test_what_an_earlier_program_said_otherwise_and_what_it_cannot_have(kind: str, journaled: dict, decided: dict,
                                                                        version_1: bool, passes: bool) -> None:
    """``EarlierPrograms.reworded`` under another program's start; under this program's own, nothing."""
    for start, allowed in ((SIGNED_ELSEWHERE, passes), ({**SIGNED_ELSEWHERE, "signature": signature_label()}, False)):
        earlier = EarlierPrograms({}, {}, {}, {})
        earlier.started(start)
        assert earlier.reworded(kind, 7, journaled, decided, version_1=version_1) is allowed, start
        assert earlier.reworded_kinds == ({kind: 1} if allowed else {})
