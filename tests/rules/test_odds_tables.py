"""The value-class tables shipped with the package (controller/rules/tables/, docs/odds.md
"Shipped tables") are exactly those the rule functions derive now (``shipped_tables`` of
tools/shipped_odds_tables.py derives them), every preset's rule set has one, and a rule set
without one (or an unreadable file) is derived at first use, never guessed."""
from __future__ import annotations

import gzip
import random

from controller.rules import odds_main_game as omg
from controller.rules import odds_tables
from controller.rules.submission import load_preset
from shipped_odds_tables import shipped_tables, write  # tools/ (tests/conftest.py)


def test_every_shipped_table_is_what_the_rules_derive_now_and_no_other_is_shipped() -> None:
    expected = {key: table.groups for key, table in shipped_tables().items()}
    shipped = {p.name.removesuffix(odds_tables.SUFFIX) for p in odds_tables.TABLES.glob(f"*{odds_tables.SUFFIX}")}
    assert shipped == set(expected), "run: python tools/shipped_odds_tables.py --write"
    for key, groups in expected.items():
        assert odds_tables.load(key) == groups, key


def test_the_tables_in_use_are_the_shipped_ones_for_the_presets() -> None:
    omg.clear_caches()
    sub = load_preset("21-baccarat")
    opts = sub.twentyone
    pb_key = odds_tables.table_key("punto-banco", omg.punto_banco_facts())
    t21_key = odds_tables.table_key(
        "twentyone", omg.twentyone_facts(bool(opts.naturals), str(opts.draw_rule)))
    assert omg._punto_banco_table().groups == odds_tables.load(pb_key)
    assert omg._twentyone_table(bool(opts.naturals), str(opts.draw_rule)).groups \
        == odds_tables.load(t21_key)


def test_a_rule_set_that_is_not_shipped_is_derived_from_its_rules() -> None:
    facts = omg.twentyone_facts(False, "first-only")
    key = odds_tables.table_key("twentyone", facts)
    assert odds_tables.load(key) is None
    omg.clear_caches()
    assert omg._twentyone_table(False, "first-only").groups == omg.derive_twentyone_table(facts).groups


def test_changed_rules_have_another_key() -> None:
    """A stored table is only found for the rules it was derived from."""
    facts = omg.punto_banco_facts()
    changed = {**facts, "player_draws": [not d if t == 5 else d for t, d in enumerate(facts["player_draws"])]}
    assert odds_tables.table_key("punto-banco", changed) != odds_tables.table_key("punto-banco", facts)
    assert odds_tables.table_key("punto-banco", facts) == odds_tables.table_key("punto-banco", omg.punto_banco_facts())


def test_a_table_file_that_cannot_be_read_is_no_table(tmp_path) -> None:
    good = ((4, ((0, 1, 6, 7),), ((1,), (0,))),)
    written = write("t-0", good, folder=tmp_path)
    assert odds_tables.load("t-0", folder=tmp_path) == good
    for damaged in (b"", b"not gzip", gzip.compress(b"{not json"), gzip.compress(b'{"a": 1}'), written.read_bytes()[:20]):
        written.write_bytes(damaged)
        assert odds_tables.load("t-0", folder=tmp_path) is None, damaged
    assert odds_tables.load("absent", folder=tmp_path) is None


def test_a_table_file_damaged_anywhere_is_no_table(tmp_path) -> None:
    """Bytes changed at seeded places of a real table's file (a bad header, a damaged deflate
    stream, a wrong checksum or length, JSON that is not a table): never an exception, never a
    table other than the one written."""
    key, table = next(iter(shipped_tables().items()))
    good = write(key, table.groups, folder=tmp_path).read_bytes()
    rng = random.Random(15)
    for _ in range(200):
        damaged = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        (tmp_path / f"{key}{odds_tables.SUFFIX}").write_bytes(bytes(damaged))
        assert odds_tables.load(key, folder=tmp_path) in (None, table.groups)


def test_writing_the_same_table_again_writes_the_same_bytes(tmp_path) -> None:
    key, table = next(iter(shipped_tables().items()))
    groups = table.groups
    first = write(key, groups, folder=tmp_path).read_bytes()
    assert write(key, groups, folder=tmp_path).read_bytes() == first
    assert [p.name for p in tmp_path.iterdir()] == [f"{key}{odds_tables.SUFFIX}"]
