"""The operators file, PIN hashing and PIN rules (controller.operators.store)."""
from __future__ import annotations

import base64
import os
import stat
import tomllib
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.operators.store import (
    DEFAULT_PATH,
    Operator,
    OperatorsError,
    PinError,
    PinHashError,
    add_operator,
    check_pin,
    hash_pin,
    load_operators,
    parse_pin_hash,
    remove_operator,
    verify_pin,
)
from controller.roles import Role

NOW = datetime(2025, 3, 1, 18, 4, 11, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def h2580() -> str:
    return hash_pin("2580")


def _b64(n: int, byte: int = 7) -> str:
    return base64.b64encode(bytes([byte]) * n).decode()


def _write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)
    return path


# Hashing ------------------------------------------------------------------------------------


def test_hash_round_trip_and_wrong_pin(h2580: str) -> None:
    assert verify_pin("2580", h2580) is True
    assert verify_pin("2581", h2580) is False
    assert verify_pin("", h2580) is False
    assert verify_pin("25800", h2580) is False


def test_hash_format_parses_with_the_documented_parameters(h2580: str) -> None:
    scheme, params, salt, digest = h2580.split("$")
    assert (scheme, params) == ("scrypt", "n=16384,r=8,p=1")
    assert len(base64.b64decode(salt, validate=True)) == 16
    assert len(base64.b64decode(digest, validate=True)) == 32
    h = parse_pin_hash(h2580)
    assert (h.n, h.r, h.p, len(h.salt), len(h.digest)) == (16384, 8, 1, 16, 32)
    assert h.format() == h2580
    assert "2580" not in h2580


def test_salts_differ_for_the_same_pin(h2580: str) -> None:
    other = hash_pin("2580")
    assert other != h2580
    assert parse_pin_hash(other).salt != parse_pin_hash(h2580).salt
    assert verify_pin("2580", other)


@pytest.mark.parametrize("bad", [
    "",
    "2580",
    "bcrypt$n=16384,r=8,p=1${s}${d}",
    "scrypt$n=16384,r=8,p=1${s}",                      # no hash part
    "scrypt$n=1024,r=8,p=1${s}${d}",                   # n weakened below the minimum
    "scrypt$n=16385,r=8,p=1${s}${d}",                  # n not a power of two
    "scrypt$n=16384,r=1,p=1${s}${d}",                  # r weakened
    "scrypt$n=16384,r=8,p=0${s}${d}",
    "scrypt$n=1048576,r=32,p=1${s}${d}",               # 4 GiB of memory per login
    "scrypt$n=016384,r=8,p=1${s}${d}",                 # leading zero
    "scrypt$r=8,n=16384,p=1${s}${d}",                  # parameters out of order
    "scrypt$n=16384,r=8,p=1${short}${d}",              # 8-byte salt
    "scrypt$n=16384,r=8,p=1${s}${short}",              # truncated hash
    "scrypt$n=16384,r=8,p=1${s}${d}$",                 # trailing field
    "scrypt$n=16384,r=8,p=1$!!!!${d}",                 # not base64
    "scrypt$n=16384,r=8,p=1${s_nopad}${d}",            # missing padding
    " scrypt$n=16384,r=8,p=1${s}${d}",
])
def test_malformed_or_weakened_hash_strings_are_refused(bad: str) -> None:
    text = bad.format(s=_b64(16), d=_b64(32), short=_b64(8), s_nopad=_b64(16).rstrip("="))
    with pytest.raises(PinHashError):
        parse_pin_hash(text)
    with pytest.raises(PinHashError):
        verify_pin("2580", text)


def test_a_tampered_hash_no_longer_verifies(h2580: str) -> None:
    scheme, params, salt, digest = h2580.split("$")
    raw = bytearray(base64.b64decode(digest))
    raw[0] ^= 1
    tampered = "$".join([scheme, params, salt, base64.b64encode(bytes(raw)).decode()])
    assert verify_pin("2580", tampered) is False
    raw_salt = bytearray(base64.b64decode(salt))
    raw_salt[-1] ^= 0x80
    other_salt = "$".join([scheme, params, base64.b64encode(bytes(raw_salt)).decode(), digest])
    assert verify_pin("2580", other_salt) is False


@settings(max_examples=5, deadline=None)
@given(st.text(alphabet="0123456789", min_size=4, max_size=12))
def test_any_pin_round_trips(pin: str) -> None:
    h = hash_pin(pin)
    assert verify_pin(pin, h)
    assert not verify_pin(pin + "0", h)


# PIN rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize("pin", ["2580", "1357", "8042", "90210", "47113", "314159265358", "1123", "2468"])
def test_good_pins_pass(pin: str) -> None:
    check_pin(pin, "d1")


@pytest.mark.parametrize("pin, why", [
    ("", "4 to 12"),
    ("123", "4 to 12"),
    ("1234567890135", "4 to 12"),
    ("12a4", "digits"),
    ("２５８０", "digits"),          # full-width digits are digits to str.isdigit, not to a keypad
    (" 2580", "digits"),
    ("0000", "one digit repeated"),
    ("99999999", "one digit repeated"),
    ("1234", "straight run"),
    ("0123456789", "straight run"),
    ("9876", "straight run"),
    ("7890", "straight run"),
    ("3210", "straight run"),
    ("1212", "repeats"),
    ("123123", "repeats"),
    ("25802580", "repeats"),
    ("4711", "operator's id"),
])
def test_weak_or_malformed_pins_are_refused(pin: str, why: str) -> None:
    with pytest.raises(PinError, match=why) as info:
        check_pin(pin, "4711")
    if len(pin) >= 4:
        assert pin not in str(info.value)


def test_add_refuses_a_weak_pin_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "operators.toml"
    with pytest.raises(PinError):
        add_operator(path, "d1", "dealer", "1111")
    assert not path.exists()


# The file -----------------------------------------------------------------------------------


def test_add_then_load(tmp_path: Path) -> None:
    path = tmp_path / "var" / "operators.toml"
    path.parent.mkdir()  # a folder that exists (only the default path's var/ is made: test_cli_operators)
    op = add_operator(path, "sue", Role.SUPERVISOR, "2580", name='Sue "Boss" O\'Hara', now=NOW)
    add_operator(path, "d1", "dealer", "1357", now=NOW)
    ops = load_operators(path)
    assert list(ops) == ["d1", "sue"]
    assert ops["sue"] == op
    assert ops["sue"].role is Role.SUPERVISOR and ops["sue"].name == 'Sue "Boss" O\'Hara'
    assert ops["sue"].created == NOW
    assert ops["d1"].role is Role.DEALER and ops["d1"].name is None
    assert verify_pin("2580", ops["sue"].pin_hash) and verify_pin("1357", ops["d1"].pin_hash)
    assert ops.warnings == []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {"operators"} and set(data["operators"]) == {"d1", "sue"}
    assert set(data["operators"]["sue"]) == {"role", "name", "pin_hash", "created"}


def test_the_pin_never_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "operators.toml"
    add_operator(path, "d1", "dealer", "8042", now=NOW)
    raw = path.read_bytes()
    assert b"8042" not in raw
    assert "8042" not in repr(load_operators(path)["d1"])


def test_file_mode_is_0600_after_add_and_remove(tmp_path: Path) -> None:
    path = tmp_path / "operators.toml"
    old = os.umask(0o022)  # the usual umask would give 0644 to a plain open()
    try:
        add_operator(path, "d1", "dealer", "8042")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        os.chmod(path, 0o644)
        add_operator(path, "d2", "dealer", "8043")  # a rewrite also repairs the mode
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        remove_operator(path, "d2")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_group_or_world_readable_file_loads_with_a_warning(tmp_path: Path, h2580: str) -> None:
    path = _write(tmp_path / "operators.toml", f'[operators.d1]\nrole = "dealer"\npin_hash = "{h2580}"\n', 0o644)
    ops = load_operators(path)
    assert list(ops) == ["d1"]
    assert len(ops.warnings) == 1 and "0644" in ops.warnings[0] and "read" in ops.warnings[0]
    os.chmod(path, 0o666)
    assert any("change who may operate" in w for w in load_operators(path).warnings)
    os.chmod(path, 0o600)
    assert load_operators(path).warnings == []


def test_add_refuses_an_existing_id_unless_replace(tmp_path: Path) -> None:
    path = tmp_path / "operators.toml"
    add_operator(path, "d1", "dealer", "8042", name="Dana", now=NOW)
    before = path.read_bytes()
    with pytest.raises(OperatorsError, match=r"operators\.d1: already exists"):
        add_operator(path, "d1", "supervisor", "1357")
    assert path.read_bytes() == before
    op = add_operator(path, "d1", "floorperson", "1357", replace=True)
    assert op.role is Role.FLOORPERSON and op.name == "Dana"  # the name is kept when not given
    loaded = load_operators(path)["d1"]
    assert verify_pin("1357", loaded.pin_hash) and not verify_pin("8042", loaded.pin_hash)


@pytest.mark.parametrize("op_id", ["", "D1", "a b", "a.b", "-x", "x" * 33, "d1\n", "é"])
def test_add_refuses_bad_ids(tmp_path: Path, op_id: str) -> None:
    with pytest.raises(OperatorsError, match="not a valid operator id"):
        add_operator(tmp_path / "o.toml", op_id, "dealer", "8042")


def test_add_refuses_bad_role_and_name(tmp_path: Path) -> None:
    path = tmp_path / "o.toml"
    with pytest.raises(OperatorsError, match=r"operators\.d1\.role: unknown role"):
        add_operator(path, "d1", "pitboss", "8042")
    with pytest.raises(OperatorsError, match=r"operators\.d1\.name: must be one printable line"):
        add_operator(path, "d1", "dealer", "8042", name="a\nb")
    assert not path.exists()


def test_remove(tmp_path: Path) -> None:
    path = tmp_path / "operators.toml"
    add_operator(path, "d1", "dealer", "8042")
    add_operator(path, "d2", "dealer", "8043")
    removed = remove_operator(path, "d1")
    assert isinstance(removed, Operator) and removed.id == "d1"
    assert list(load_operators(path)) == ["d2"]
    with pytest.raises(OperatorsError, match=r"operators\.d1: no such operator"):
        remove_operator(path, "d1")
    with pytest.raises(OperatorsError, match="file not found"):
        remove_operator(tmp_path / "missing.toml", "d1")
    # in a folder that is not there: it said "cannot write the file: No such file or directory"
    with pytest.raises(OperatorsError, match="missing/operators.toml: file not found"):
        remove_operator(tmp_path / "missing" / "operators.toml", "d1")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".operators.toml.lock", "operators.toml"]  # no missing.toml lock


def test_a_refused_remove_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    """A configuration review: `operators remove` of an id not in the file, or of a file that does
    not load, made its lock file beside it before it refused (a refused command changed the
    folder); `add` checks first. Nothing is made."""
    path = tmp_path / "operators.toml"
    path.write_text(f'[operators.d1]\nrole = "dealer"\npin_hash = "{hash_pin("8042")}"\n')
    path.chmod(0o600)
    with pytest.raises(OperatorsError, match=r"operators\.nobody: no such operator"):
        remove_operator(path, "nobody")
    bad = tmp_path / "bad.toml"
    bad.write_text('[operators.d1]\nrole = "boss"\n')
    with pytest.raises(OperatorsError, match=r"operators\.d1\.pin_hash: required key is missing"):
        remove_operator(bad, "d1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml", "operators.toml"]


def test_a_reserved_id_in_an_older_file_can_be_taken_out(tmp_path: Path, capsys) -> None:
    """A review of the day's changes: a file holding `auto-dealer` (valid before that id was
    reserved) no longer loads, and `operators remove auto-dealer` was refused too: the tool gave no
    way out. Remove takes it out; the file then loads."""
    from cli_run import run

    path = tmp_path / "operators.toml"
    h = hash_pin("2580")
    path.write_text(f'[operators.auto-dealer]\nrole = "dealer"\npin_hash = "{h}"\n[operators.d1]\nrole = "dealer"\n'
                    f'pin_hash = "{h}"\n')
    path.chmod(0o600)
    with pytest.raises(OperatorsError, match="auto-dealer is the id of the automated dealer"):
        load_operators(path)
    code, out, err = run(capsys, "operators", "remove", "auto-dealer", "--file", str(path))
    assert (code, err) == (0, ""), err
    assert list(load_operators(path)) == ["d1"]


def test_atomic_write_keeps_the_old_file_when_replace_fails(tmp_path: Path, mocker) -> None:
    path = tmp_path / "operators.toml"
    add_operator(path, "d1", "dealer", "8042")
    before = path.read_bytes()
    mocker.patch("controller.operators.store.os.replace", side_effect=OSError(28, "No space left on device"))
    with pytest.raises(OperatorsError, match="cannot write the file: No space left on device"):
        add_operator(path, "d2", "supervisor", "1357")
    with pytest.raises(OperatorsError, match="cannot write the file"):
        remove_operator(path, "d1")
    mocker.stopall()
    assert path.read_bytes() == before
    assert list(load_operators(path)) == ["d1"]
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == [".operators.toml.lock", "operators.toml"]  # no temporary file left behind


def test_atomic_write_keeps_the_old_file_when_fsync_fails(tmp_path: Path, mocker) -> None:
    path = tmp_path / "operators.toml"
    add_operator(path, "d1", "dealer", "8042")
    before = path.read_bytes()
    mocker.patch("controller.operators.store.os.fsync", side_effect=OSError(5, "Input/output error"))
    with pytest.raises(OperatorsError, match="Input/output error"):
        add_operator(path, "d2", "dealer", "1357")
    mocker.stopall()
    assert path.read_bytes() == before


def test_default_path_is_relative_to_the_working_directory() -> None:
    assert DEFAULT_PATH == "var/operators.toml"


# Validation ---------------------------------------------------------------------------------


def _entry(h: str, **extra: str) -> str:
    lines = ['[operators.d1]', 'role = "dealer"', f'pin_hash = "{h}"'] + [f"{k} = {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, key, reason", [
    ("[operators.d1]\nrole = \"dealer\"\n", "operators.d1.pin_hash", "missing"),
    ("[operators.d1]\npin_hash = \"{h}\"\n", "operators.d1.role", "missing"),
    ("[operators.d1]\nrole = \"boss\"\npin_hash = \"{h}\"\n", "operators.d1.role", "unknown value 'boss'; allowed: dealer, floorperson, supervisor"),
    ("[operators.d1]\nrole = \"Dealer\"\npin_hash = \"{h}\"\n", "operators.d1.role", "allowed: dealer, floorperson, supervisor"),
    ("[operators.d1]\nrole = 1\npin_hash = \"{h}\"\n", "operators.d1.role", "expected a string, got an integer"),
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = \"2580\"\n", "operators.d1.pin_hash", "not a PIN hash"),
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = \"2580$x\"\n", "operators.d1.pin_hash", "unsupported hash scheme"),
    ("[operators.d1]\nrole = \"dealer\"\npin = \"2580\"\npin_hash = \"{h}\"\n", "operators.d1.pin", "unknown key"),
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = \"{h}\"\nname = \"\"\n", "operators.d1.name", "must not be empty"),
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = \"{h}\"\ncreated = 2025-03-01\n", "operators.d1.created", "offset date-time"),
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = \"{h}\"\ncreated = 2025-03-01T10:00:00\n", "operators.d1.created", "offset date-time"),
    # a time with no UTC equivalent in the calendar: shown and written in UTC, it ended in a traceback
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = \"{h}\"\ncreated = 9999-12-31T23:59:59-01:00\n", "operators.d1.created",
     "9999-12-31T23:59:59-01:00 is outside the years 1 to 9999 in UTC"),
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = \"{h}\"\ncreated = 0001-01-01T00:00:00+14:00\n", "operators.d1.created",
     "outside the years 1 to 9999 in UTC"),
    ("[operators.D1]\nrole = \"dealer\"\npin_hash = \"{h}\"\n", "operators.D1", "not a valid operator id"),
    # the automated dealer's and floorperson's ids: a person under one was journaled as the machine (a review of roles)
    ("[operators.auto-dealer]\nrole = \"dealer\"\npin_hash = \"{h}\"\n", "operators.auto-dealer",
     "auto-dealer is the id of the automated dealer, no person's"),
    ("[operators.auto-floor]\nrole = \"supervisor\"\npin_hash = \"{h}\"\n", "operators.auto-floor",
     "auto-floor is the id of the automated floorperson, no person's"),
    ("[operators]\nd1 = \"dealer\"\n", "operators.d1", "expected a table ([operators.d1]), got a string"),
    ("operators = 3\n", "operators", "expected a table ([operators]), got an integer"),
    ("[operators.d1]\nrole = \"dealer\"\npin_hash = 2580\n", "operators.d1.pin_hash", "expected a string, got an integer"),
    ("[people.d1]\nrole = \"dealer\"\n", "people", "unknown section; known sections: operators"),
    ("[operators.d1\n", "", "TOML syntax error"),
])
def test_bad_files_name_the_file_the_key_and_the_reason(tmp_path: Path, h2580: str, text: str, key: str,
                                                        reason: str) -> None:
    path = _write(tmp_path / "operators.toml", text.replace("{h}", h2580))
    with pytest.raises(OperatorsError) as info:
        load_operators(path)
    exc = info.value
    assert exc.source == str(path) and exc.key == key and reason in exc.reason
    assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
    assert "2580" not in str(exc)  # a PIN typed where the hash belongs is never echoed


def test_errors_are_usage_errors_so_the_cli_reports_one_line() -> None:
    from controller.errors import UsageError

    assert issubclass(OperatorsError, UsageError) and issubclass(OperatorsError, ValueError)
    assert issubclass(PinError, UsageError)


def test_unreadable_and_odd_files(tmp_path: Path) -> None:
    with pytest.raises(OperatorsError, match="file not found"):
        load_operators(tmp_path / "none.toml")
    with pytest.raises(OperatorsError, match="is a directory"):
        load_operators(tmp_path)
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"\xff\xfe[")
    with pytest.raises(OperatorsError, match="not UTF-8"):
        load_operators(bad)


def test_empty_file_is_no_operators(tmp_path: Path) -> None:
    assert len(load_operators(_write(tmp_path / "o.toml", "# nobody yet\n"))) == 0


def test_hand_written_file_with_name_and_created(tmp_path: Path, h2580: str) -> None:
    path = _write(tmp_path / "o.toml", _entry(h2580, name='"Dana Lee"', created="2025-03-01T19:04:11+01:00"))
    op = load_operators(path)["d1"]
    assert op.name == "Dana Lee" and op.created == NOW
    assert op.to_public() == {"id": "d1", "role": "dealer", "name": "Dana Lee", "created": "2025-03-01T18:04:11Z"}


def test_add_refuses_to_rewrite_a_broken_file(tmp_path: Path) -> None:
    text = "[operators.d1]\nrole = \"boss\"\npin_hash = \"x\"\n"
    path = _write(tmp_path / "o.toml", text)
    with pytest.raises(OperatorsError, match=r"operators\.d1\.role"):
        add_operator(path, "d2", "dealer", "8042")
    assert path.read_text(encoding="utf-8") == text


def test_a_change_through_a_symbolic_link_waits_for_one_through_the_files_own_name(tmp_path: Path, monkeypatch) -> None:
    """docs/operators.md: "`add` and `remove` take an exclusive lock (`.operators.toml.lock`
    beside the file)". Named through a link, the lock was `.link.toml.lock` while the write went to
    the link's file: a removal through the link did not wait for an add through the file's name,
    which wrote the removed operator back (a review: "removed operator d9", and d9 still logged in)."""
    import fcntl

    from controller.operators import file_writes

    real = tmp_path / "operators.toml"
    add_operator(real, "sup", Role.SUPERVISOR, "1357")
    add_operator(real, "d9", Role.DEALER, "5926")
    link = tmp_path / "link.toml"
    link.symlink_to("operators.toml")
    monkeypatch.setattr(file_writes, "LOCK_TIMEOUT_S", 0.3)
    fd = os.open(tmp_path / ".operators.toml.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # an `operators add --file operators.toml` reading, changing, writing
        with pytest.raises(OperatorsError, match="busy"):
            remove_operator(link, "d9")
    finally:
        os.close(fd)
    assert "d9" in load_operators(real)
    assert not (tmp_path / ".link.toml.lock").exists()


def test_a_new_pin_keeps_when_the_operator_was_added(tmp_path: Path) -> None:
    """A review of the people side: `operators add --replace` (a PIN change every few months) wrote
    the change's time as `created`, and the date each operator was added was lost."""
    path = tmp_path / "operators.toml"
    first = datetime(2025, 3, 1, 18, 4, 11, tzinfo=timezone.utc)
    add_operator(path, "d1", Role.DEALER, "4826", "Dana Lee", now=first)
    add_operator(path, "d1", Role.FLOORPERSON, "5926", replace=True)
    op = load_operators(path)["d1"]
    assert (op.name, op.role, op.created) == ("Dana Lee", Role.FLOORPERSON, first)


def test_a_link_into_a_missing_folder_is_said_as_a_missing_folder(tmp_path: Path) -> None:
    """The lock beside the file a link names was opened before the writer's own checks, and its
    bare OSError ("No such file or directory") took the place of their words (a review)."""
    link = tmp_path / "operators.toml"
    link.symlink_to("nothere/operators.toml")
    with pytest.raises(OperatorsError) as said:
        add_operator(link, "d1", Role.DEALER, "5926")
    assert f"no such folder {tmp_path / 'nothere'}" in str(said.value), str(said.value)


def test_a_new_pin_for_an_operator_whose_file_says_no_created_time_makes_none_up(tmp_path: Path) -> None:
    """`created` is optional; `--replace` keeps it, and for an operator the file gives no time wrote the
    change's as the time the operator was added (a review)."""
    path = tmp_path / "operators.toml"
    path.write_text(f'[operators.d1]\nrole = "dealer"\nname = "Dana Lee"\npin_hash = "{hash_pin("4826")}"\n',
                    encoding="utf-8")
    path.chmod(0o600)
    assert load_operators(path)["d1"].created is None
    add_operator(path, "d1", Role.DEALER, "5926", replace=True)
    assert (load_operators(path)["d1"].name, load_operators(path)["d1"].created) == ("Dana Lee", None)
