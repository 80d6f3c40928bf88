"""The chain check's type shapes (``controller.journal.type_shapes``): a text matching a canonical
payload's type shape is canonical JSON exactly as the reference test finds it, and ``PayloadShapes``
with type shapes learned gives the reference's answer, on canonical values of the same types and on
texts a forger could write (random edits of canonical ones); and an integer longer than ``int``
reads is refused as the reference refuses it, by every shape."""
from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.journal import Journal, verify
from controller.journal import shapes as shapes_module
from controller.journal.chain import canonical_json
from controller.journal.shapes import TYPE_SHAPE_EVERY, PayloadShapes, is_canonical_reference
from controller.journal.type_shapes import type_pattern

_NASTY = '0123456789-+.eE "\\,:[]{}aAZtrufnl\u0001\u007f\u2028ü'


def _values() -> st.SearchStrategy:
    scalars = (st.none() | st.booleans() | st.integers(-10**20, 10**20)
               | st.text(alphabet='aZ1 "\\\u0001\u007fü\u2028', max_size=5))
    return st.recursive(scalars, lambda inner: st.lists(inner, min_size=1, max_size=4)
                        | st.dictionaries(st.text(alphabet='abZ1"\\', max_size=3), inner, max_size=4), max_leaves=14)


def _same_types(value: object, rng: random.Random) -> object:
    """A value of the same type shape as ``value``: other integers, other strings needing no escape,
    other booleans, and a list of equal element shapes made longer or shorter."""
    if isinstance(value, bool):
        return rng.random() < 0.5
    if isinstance(value, int):
        return rng.choice([0, 7, -7, 10**rng.randrange(1, 25), -(10**rng.randrange(1, 25)) + 1])
    if isinstance(value, str):
        return "".join(rng.choice("azAZ09 .-ü\u2028\u007f") for _ in range(rng.randrange(0, 8)))
    if isinstance(value, dict):
        return {key: _same_types(item, rng) for key, item in value.items()}
    if isinstance(value, list):
        digits = sys.get_int_max_str_digits()
        elements = {type_pattern(item, digits) for item in value}
        if len(elements) == 1:  # any number of them
            return [_same_types(value[rng.randrange(len(value))], rng) for _ in range(rng.randrange(1, 6))]
        return [_same_types(item, rng) for item in value]
    return value


def _edited(text: str, rng: random.Random) -> str:
    """A forger's text: ``text`` with a few characters deleted, inserted, replaced or repeated."""
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(text) + 1)
        choice = rng.randrange(4)
        if choice == 0 and at < len(text):
            text = text[:at] + text[at + 1:]
        elif choice == 1:
            text = text[:at] + rng.choice(_NASTY) + text[at:]
        elif choice == 2 and at < len(text):
            text = text[:at] + rng.choice(_NASTY) + text[at + 1:]
        else:
            end = min(len(text), at + rng.randrange(1, 12))
            text = text[:end] + text[at:end] + text[end:]
    return text


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.text(alphabet='abZ1"\\', max_size=3), _values(), min_size=1, max_size=5),
       seed=st.integers(0, 2**16))
def test_a_text_matching_a_type_shape_is_canonical_as_the_reference_finds(value: dict, seed: int) -> None:
    text = canonical_json(value)
    pattern = type_pattern(value, sys.get_int_max_str_digits())
    if pattern is None:  # a string canonical JSON escapes: no type shape
        assert "\\" in text
        return
    match = re.compile(pattern).fullmatch
    assert match(text)
    rng = random.Random(seed)
    for _ in range(20):
        same = canonical_json(_same_types(value, rng))
        assert match(same), same
        forged = _edited(text, rng)
        assert match(forged) is None or is_canonical_reference(forged), forged


def _learn(shapes: PayloadShapes, value: dict, group: str, seed: int) -> None:
    """Show ``shapes`` canonical texts of ``value``'s type shape (other strings and list lengths:
    other digit and run shapes), enough for its type shape to be learned."""
    rng = random.Random(seed)
    for _ in range(2 * TYPE_SHAPE_EVERY):
        text = canonical_json(_same_types(value, rng))
        assert shapes.is_canonical(text, text.encode(), group)


@settings(max_examples=150, deadline=None)
@given(value=st.dictionaries(st.text(alphabet="abZ1", max_size=3), _values(), min_size=1, max_size=5),
       seed=st.integers(0, 2**16))
def test_payload_shapes_with_type_shapes_learned_answer_as_the_reference(value: dict, seed: int) -> None:
    shapes = PayloadShapes()
    _learn(shapes, value, "round_start", seed)
    rng = random.Random(seed + 1)
    text = canonical_json(value)
    for _ in range(20):
        for other in (canonical_json(_same_types(value, rng)), _edited(text, rng)):
            for group in ("round_start", "other"):
                assert shapes.is_canonical(other, other.encode(), group) == is_canonical_reference(other), other


def test_a_learned_type_shape_vouches_without_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round's wagers: every list length and wager kind, after a few, without the reference test
    (the run and digit shapes alone could not: every sequence of kinds is a shape of its own)."""
    shapes = PayloadShapes()
    rng = random.Random(5)

    def round_start(n: int) -> str:
        return canonical_json({"kind": "normal", "round": n, "wagers": [
            {"amount": rng.randrange(1, 400) * 500, "kind": rng.choice(["banker", "player", "tie", "banker_pair"]),
             "seat": rng.randrange(1, 8)} for _ in range(rng.randrange(1, 9))]})
    for n in range(TYPE_SHAPE_EVERY):
        text = round_start(n)
        assert shapes.is_canonical(text, text.encode(), "round_start")
    references = []
    monkeypatch.setattr(shapes_module, "_reference_value", lambda text: references.append(text))
    for n in range(TYPE_SHAPE_EVERY, 300):
        text = round_start(n)
        assert shapes.is_canonical(text, text.encode(), "round_start")
    assert references == []
    monkeypatch.undo()
    forged = text.replace("}]}", "},]}")
    assert not shapes.is_canonical(forged, forged.encode(), "round_start")  # to the reference, which refuses it


_LEARNED = '{"a":[1,-2],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}'


@pytest.mark.parametrize("refused", [
    '{"a":[01,-2],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,-0],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2.0],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2e3],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,NaN],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,-Infinity],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1, 2],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2,],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2],"b":"x\\u0041","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2],"b":"x\\/","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2],"b":"x\u0001","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2],"b":"x\ty","c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2],"b":"x","c":True,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}],"f":[{"g":"h"}]}}',
    '{"b":"x","a":[1,2],"c":true,"d":null,"e":{"f":[{"g":"h"}]}}',
    '{"a":[1,2],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"},{"i":1,"g":"h"}]}}',
    '{"a":[1,2],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]},}',
    '{"a":[1,2],"b":"x","c":true,"d":null,"e":{"f":[{"g":"h"}]}} ',
])
def test_a_learned_type_shape_does_not_pass_what_the_writer_never_writes(refused: str) -> None:
    shapes = PayloadShapes()
    _learn(shapes, shapes_module.decode_payload_strict(_LEARNED), "k", 1)
    assert shapes.is_canonical(_LEARNED, _LEARNED.encode(), "k")
    assert not is_canonical_reference(refused)
    assert not shapes.is_canonical(refused, refused.encode(), "k")


@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_longer_than_int_reads_is_refused_by_every_shape(sign: str) -> None:
    """An integer of more digits than ``int`` reads (``sys.get_int_max_str_digits()``) where a
    learned shape has one: the reference cannot decode it, and neither the run shape nor the type
    shape vouches for it (the run shape did before: any number of digits was an integer to it)."""
    limit = sys.get_int_max_str_digits()
    shapes = PayloadShapes()
    _learn(shapes, {"card": "AS", "n": 1, "to": "player"}, "card", 3)
    for n in (12, -12, 345, -345):  # the run shapes of positive and negative ones
        text = canonical_json({"card": "7H", "n": n, "to": "player"})
        assert shapes.is_canonical(text, text.encode(), "card") and shapes.is_canonical(text, text.encode(), "card")
    for digits, canonical in ((limit, True), (limit + 1, False)):
        text = canonical_json({"card": "7H", "n": 1, "to": "player"}).replace('"n":1', f'"n":{sign}{"1" * digits}')
        assert is_canonical_reference(text) is canonical
        assert shapes.is_canonical(text, text.encode(), "card") is canonical
        assert shapes.is_canonical(text, text.encode(), "other") is canonical


@pytest.mark.parametrize("depth", [20, 600])
def test_lists_nested_deeply_have_a_type_shape_of_their_size_or_none(depth: int) -> None:
    """A type shape is as long as its value is (a list of like elements writes its element once:
    twice would double a list nested in lists at every level), and a value nested too deeply to
    write or compile one has none: its payloads are checked all the same, without an error."""
    nested: object = 1
    for _ in range(depth):
        nested = [nested]
    if depth < 100:
        assert len(type_pattern({"a": nested}, sys.get_int_max_str_digits())) < 100 * depth
    shapes = PayloadShapes()
    for i in range(2 * TYPE_SHAPE_EVERY):  # other strings each time: no digit or run shape repeats
        text = canonical_json({"a": nested, "s": "x" * i})
        forged = text.replace("[1]", "[1,]")
        assert shapes.is_canonical(text, text.encode(), "deep") and is_canonical_reference(text)
        assert not shapes.is_canonical(forged, forged.encode(), "deep") and not is_canonical_reference(forged)


def test_a_journal_of_deeply_nested_payloads_verifies(tmp_path: Path) -> None:
    """Through `verify` on a real file: payloads nested 600 deep, of a shape no digit or run shape
    covers, often enough for a type shape to be tried (it cannot be compiled): the journal
    verifies, as the reference finds it."""
    nested: object = 1
    for _ in range(600):
        nested = [nested]
    path = tmp_path / "deep.db"
    with Journal.open(path, table_id="T1") as journal:
        for i in range(2 * TYPE_SHAPE_EVERY):
            journal.append("deep", {"a": nested, "s": "x" * i})
    report = verify(path, anchor_files=[])
    assert report.ok and report.entries == 2 * TYPE_SHAPE_EVERY, report.reason
