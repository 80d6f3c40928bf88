"""Tests for the Rules Submission's shipped presets (controller/rules/presets/) and for how a preset
name or a file path resolves to a submission (controller/rules/submission.py)."""
from __future__ import annotations

import types
from decimal import Decimal
from pathlib import Path

import pytest
from submission_helpers import EZ, PRESETS, W, no_floats, roundtrip, write

from controller.rules import submission as sub_mod
from controller.rules.errors import SubmissionError
from controller.rules.model import BonusRank, Dealing, Game, Payout
from controller.rules.submission import (
    DEFAULT_PRESET,
    HouseMoneyOptions,
    Submission,
    TwentyOneOptions,
    default_submission,
    load_preset,
    load_submission,
    preset_names,
    resolve_submission,
    submission_in_folder,
)

PRESET_DIR = Path(sub_mod.__file__).parent / "presets"


# Presets ------------------------------------------------------------------------------------


def test_preset_names_are_the_shipped_files():
    assert preset_names() == sorted(PRESETS)
    assert sorted(p.stem for p in PRESET_DIR.glob("*.toml")) == sorted(PRESETS)
    assert DEFAULT_PRESET == "minibaccarat" and DEFAULT_PRESET in preset_names()


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_loads_round_trips_and_matches_its_file(name):
    s = load_preset(name)
    assert s.source == f"preset:{name}"
    assert roundtrip(s) == s
    # the preset loaded as a plain file gives the same rules
    from_file = load_submission(PRESET_DIR / f"{name}.toml")
    assert from_file == Submission(**{**{f: getattr(s, f) for f in Submission.__slots__}, "source": from_file.source})
    assert isinstance(s.paytable, types.MappingProxyType)
    assert isinstance(s.bonus_paytable, types.MappingProxyType)
    assert isinstance(s.commission, Decimal) and isinstance(s.house_money.portion, Decimal)
    assert no_floats(s.to_dict())
    # every preset file is commented
    assert (PRESET_DIR / f"{name}.toml").read_text(encoding="utf-8").lstrip().startswith("#")


def test_minibaccarat_preset_values():
    s = load_preset("minibaccarat")
    assert s.name == "Minibaccarat, 8 decks"
    assert (s.game, s.decks, s.dealing) == (Game.PUNTO_BANCO, 8, Dealing.FACE_UP)
    assert (s.burn_cards, s.min_cover_depth) == (1, 10)
    assert s.seats == (1, 2, 3, 4, 5, 6, 7)
    assert s.wagers == {W.PLAYER, W.BANKER, W.TIE, W.PLAYER_PAIR, W.BANKER_PAIR}
    assert dict(s.paytable) == {
        W.PLAYER: Payout(1), W.BANKER: Payout(1), W.TIE: Payout(8),
        W.PLAYER_PAIR: Payout(11), W.BANKER_PAIR: Payout(11),
    }
    assert s.commission == Decimal("0.05") and s.commission_rounding == "down"
    assert s.unauthorized_third_card == "discard"
    assert s.house_money == HouseMoneyOptions() and s.twentyone == TwentyOneOptions()


def test_midibaccarat_preset_values():
    s = load_preset("midibaccarat")
    assert (s.game, s.decks, s.dealing) == (Game.PUNTO_BANCO, 6, Dealing.FACE_DOWN)
    assert s.seats == tuple(range(1, 10))
    assert W.HOUSE_MONEY in s.wagers
    assert W.HOUSE_MONEY not in s.paytable
    assert s.house_money == HouseMoneyOptions(Payout(3, 1), Payout(15, 1), Decimal(1))
    assert s.commission == Decimal("0.05")


def test_ez_baccarat_preset_values():
    s = load_preset("ez-baccarat")
    assert (s.game, s.decks, s.dealing) == (Game.EZ_BACCARAT, 8, Dealing.FACE_UP)
    assert s.commission == 0
    assert {W.DRAGON7, W.PANDA8} <= s.wagers
    assert s.payout(W.DRAGON7) == Payout(40) and s.payout(W.PANDA8) == Payout(25)


def test_21_baccarat_preset_values():
    s = load_preset("21-baccarat")
    assert (s.game, s.decks, s.dealing) == (Game.TWENTYONE, 6, Dealing.FACE_UP)
    assert s.wagers == {W.PLAYER, W.BANKER, W.TIE, W.PLAYER_BONUS, W.BANKER_BONUS}
    assert dict(s.paytable) == {W.PLAYER: Payout(1), W.BANKER: Payout(1), W.TIE: Payout(10)}
    assert s.commission == 0
    assert s.twentyone == TwentyOneOptions(True, "each")
    assert BonusRank.NONE not in s.bonus_paytable
    assert dict(s.bonus_paytable) == {
        BonusRank.PAIR: Payout(2), BonusRank.FLUSH: Payout(4), BonusRank.STRAIGHT: Payout(7),
        BonusRank.THREE_OF_A_KIND: Payout(25), BonusRank.STRAIGHT_FLUSH: Payout(40),
        BonusRank.SUITED_THREE_OF_A_KIND: Payout(100),
    }
    assert s.bonus_payout("flush") == Payout(4)


def test_default_submission_is_the_default_preset():
    assert default_submission() == load_preset(DEFAULT_PRESET)
    assert resolve_submission(None) == default_submission()


# Resolution ---------------------------------------------------------------------------------


def test_resolve_submission(tmp_path):
    path = write(tmp_path, EZ)
    assert resolve_submission(str(path)).game is Game.EZ_BACCARAT
    assert resolve_submission(path).source == str(path)
    for name in PRESETS:
        assert resolve_submission(name) == load_preset(name)
        assert resolve_submission(f"preset:{name}") == load_preset(name)
    with pytest.raises(SubmissionError, match=r"^blackjack: neither an existing file nor a preset; presets: 21-baccarat"):
        resolve_submission("blackjack")
    with pytest.raises(SubmissionError, match=r"^preset:blackjack: unknown preset"):
        resolve_submission("preset:blackjack")
    with pytest.raises(SubmissionError, match=r"missing\.toml: file not found"):
        resolve_submission(str(tmp_path / "missing.toml"))
    with pytest.raises(SubmissionError, match=r"^other\.toml: file not found"):
        resolve_submission("other.toml")
    with pytest.raises(SubmissionError, match=r'^"": empty; give a file or a preset'):
        resolve_submission("")


def test_a_file_that_is_there_but_cannot_be_read_is_said_as_such_never_as_missing_or_a_preset(tmp_path, monkeypatch):
    """A configuration review: a link that loops was "file not found" to `run --submission` and
    `rules show` (and `rules check` said why), and one named like a preset dealt the preset instead
    of the file given. What is there is read, and its reason said, as `rules check` says it."""
    loop = tmp_path / "loop.toml"
    loop.symlink_to(loop)
    with pytest.raises(SubmissionError, match=r"loop\.toml: cannot read the file: Too many levels of symbolic links"):
        resolve_submission(str(loop))
    monkeypatch.chdir(tmp_path)
    Path("midibaccarat").symlink_to("midibaccarat")
    with pytest.raises(SubmissionError, match=r"^midibaccarat: cannot read the file: Too many levels of symbolic links"):
        resolve_submission("midibaccarat")
    assert resolve_submission("preset:midibaccarat") == load_preset("midibaccarat")  # a preset, said so
    plain = write(tmp_path, EZ)
    with pytest.raises(SubmissionError, match=rf"{plain.name}/x\.toml: file not found"):  # a file is no folder
        resolve_submission(str(plain / "x.toml"))


def test_load_preset_unknown():
    with pytest.raises(SubmissionError, match=r"^preset:nope: unknown preset; presets: 21-baccarat, ez-baccarat, midibaccarat, minibaccarat$"):
        load_preset("nope")
    with pytest.raises(SubmissionError, match="unknown preset"):
        load_preset("../submission")


def test_a_file_beats_a_preset_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, EZ, "minibaccarat")
    assert resolve_submission("minibaccarat").game is Game.EZ_BACCARAT


# What an operator may name at a running table ----------------------------------------------------


def test_a_name_in_the_folder_is_read_and_nothing_else(tmp_path: Path) -> None:
    """``submission_in_folder``: a preset, or a .toml file listed in the folder; a path, a hidden
    file, another suffix or a sub-folder's file are refused in words that describe only the folder."""
    folder = tmp_path / "subs"
    (folder / "deeper").mkdir(parents=True)
    for name in ("house.toml", ".hidden.toml", "deeper/inner.toml", "notes.txt"):
        (folder / name).write_text((PRESET_DIR / "ez-baccarat.toml").read_text())
    # a link out of the folder (a bad-input review: one to /etc/shadow was read and its first line's
    # syntax described to the floorperson), and one to a file inside it: neither is a file of the folder
    (tmp_path / "elsewhere.toml").write_text("secret = 1\n")
    (folder / "shadow.toml").symlink_to(tmp_path / "elsewhere.toml")
    (folder / "alias.toml").symlink_to(folder / "house.toml")
    assert submission_in_folder(None, folder) == default_submission()
    assert submission_in_folder("preset:midibaccarat", folder) == load_preset("midibaccarat")
    for name in ("house", "house.toml"):
        got = submission_in_folder(name, folder)
        assert got.game is Game.EZ_BACCARAT and got.source.endswith("house.toml")
    for name in (str(folder / "house.toml"), ".hidden.toml", ".hidden", "deeper/inner.toml", "notes.txt",
                 "../subs/house.toml", "", "deeper", "shadow", "alias.toml"):
        with pytest.raises(SubmissionError) as err:
            submission_in_folder(name, folder)
        assert str(err.value).endswith(f"submissions folder {folder} holds house.toml"), (name, str(err.value))
    with pytest.raises(SubmissionError, match="the table has no submissions folder$"):
        submission_in_folder("house", None)
    with pytest.raises(SubmissionError, match="holds no .toml file$"):
        submission_in_folder("house", tmp_path / "missing")
