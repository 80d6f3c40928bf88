"""The command-line contract of `shoectl operators add|list|remove`."""
from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from controller.operators.store import load_operators, verify_pin
from cli_run import run

PIN = "8042"




@pytest.fixture
def ops_file(tmp_path: Path) -> Path:
    (tmp_path / "var").mkdir()  # a folder that exists: only the default's var/ is made
    return tmp_path / "var" / "operators.toml"


@pytest.fixture
def stdin(monkeypatch):
    def feed(text: str) -> None:
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
    return feed


@pytest.fixture
def getpass_answers(monkeypatch):
    """Make getpass.getpass answer from a list, recording the prompts."""
    prompts: list[str] = []

    def install(*answers: str | type[BaseException]) -> list[str]:
        queue = list(answers)

        def fake(prompt: str = "Password: ", stream=None) -> str:
            prompts.append(prompt)
            answer = queue.pop(0)
            if isinstance(answer, type):
                raise answer()
            return answer
        monkeypatch.setattr("getpass.getpass", fake)
        return prompts
    return install


def _no_pin(*texts: str, pin: str = PIN) -> None:
    for t in texts:
        assert pin not in t


def test_add_with_pin_stdin_then_list(capsys, stdin, ops_file: Path) -> None:
    stdin(PIN + "\n")
    code, out, err = run(capsys, "operators", "add", "sue", "--role", "supervisor", "--name", "Sue Lee",
                         "--file", str(ops_file), "--pin-stdin")
    assert (code, err) == (0, "")
    assert out == f"added operator sue (supervisor, Sue Lee) in {ops_file}\n"
    assert stat.S_IMODE(ops_file.stat().st_mode) == 0o600
    raw = ops_file.read_text(encoding="utf-8")
    _no_pin(raw)
    op = load_operators(ops_file)["sue"]
    assert verify_pin(PIN, op.pin_hash)

    code, out, err = run(capsys, "operators", "list", "--file", str(ops_file))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "ROLE", "NAME", "CREATED"]
    assert lines[1].split()[:4] == ["sue", "supervisor", "Sue", "Lee"]
    assert "scrypt" not in out and op.pin_hash not in out
    _no_pin(out)

    code, out, err = run(capsys, "operators", "list", "--file", str(ops_file), "--json")
    assert (code, err) == (0, "")
    d = json.loads(out)
    assert d["file"] == str(ops_file) and d["warnings"] == []
    assert len(d["operators"]) == 1
    entry = d["operators"][0]
    assert set(entry) == {"id", "role", "name", "created"}
    assert (entry["id"], entry["role"], entry["name"]) == ("sue", "supervisor", "Sue Lee")
    assert entry["created"].endswith("Z")
    assert "scrypt" not in out


def test_add_interactive_asks_twice_without_echo(capsys, getpass_answers, ops_file: Path) -> None:
    prompts = getpass_answers(PIN, PIN)
    code, out, err = run(capsys, "operators", "add", "d1", "--role", "dealer", "--file", str(ops_file))
    assert (code, err) == (0, "")
    assert prompts == ["PIN for d1: ", "PIN for d1 again: "]
    assert verify_pin(PIN, load_operators(ops_file)["d1"].pin_hash)
    _no_pin(out, err, ops_file.read_text(encoding="utf-8"))


def test_add_interactive_pins_must_match(capsys, getpass_answers, ops_file: Path) -> None:
    getpass_answers(PIN, "8043")
    code, out, err = run(capsys, "operators", "add", "d1", "--role", "dealer", "--file", str(ops_file))
    assert code == 2 and out == ""
    assert err == "shoectl operators add: error: the two PINs differ; nothing was changed\n"
    assert not ops_file.exists()
    _no_pin(err)
    _no_pin(err, pin="8043")


def test_add_interactive_weak_pin_is_refused_before_asking_again(capsys, getpass_answers, ops_file: Path) -> None:
    prompts = getpass_answers("1234", "1234")
    code, out, err = run(capsys, "operators", "add", "d1", "--role", "dealer", "--file", str(ops_file))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "straight run" in err and "1234" not in err
    assert prompts == ["PIN for d1: "]
    assert not ops_file.exists()


def test_add_interactive_end_of_input(capsys, getpass_answers, ops_file: Path) -> None:
    getpass_answers(EOFError)
    code, _, err = run(capsys, "operators", "add", "d1", "--role", "dealer", "--file", str(ops_file))
    assert code == 2 and "no PIN entered" in err


@pytest.mark.parametrize("given, why", [
    ("", "no PIN on standard input"),
    ("\n", "no PIN on standard input"),
    ("0000\n", "one digit repeated"),
    ("39\n", "4 to 12 digits"),
    ("80 42\n", "digits 0-9"),
])
def test_add_pin_stdin_bad_input(capsys, stdin, ops_file: Path, given: str, why: str) -> None:
    stdin(given)
    code, out, err = run(capsys, "operators", "add", "d1", "--role", "dealer", "--file", str(ops_file), "--pin-stdin")
    assert code == 2 and out == ""
    assert err.startswith("shoectl operators add: error: ") and why in err and len(err.splitlines()) == 1
    if given.strip():
        assert given.strip() not in err
    assert not ops_file.exists()


def test_add_existing_id_is_refused_before_asking_for_a_pin(capsys, stdin, getpass_answers, ops_file: Path) -> None:
    stdin(PIN + "\n")
    assert run(capsys, "operators", "add", "d1", "--role", "dealer", "--file", str(ops_file), "--pin-stdin")[0] == 0
    before = ops_file.read_bytes()
    prompts = getpass_answers("1357", "1357")
    code, out, err = run(capsys, "operators", "add", "d1", "--role", "supervisor", "--file", str(ops_file))
    assert code == 2 and out == "" and prompts == []
    assert "operators.d1: already exists (use --replace" in err
    assert ops_file.read_bytes() == before

    code, out, err = run(capsys, "operators", "add", "d1", "--role", "floorperson", "--file", str(ops_file), "--replace")
    assert (code, err) == (0, "") and out.startswith("replaced operator d1 (floorperson)")
    op = load_operators(ops_file)["d1"]
    assert op.role.name == "FLOORPERSON" and verify_pin("1357", op.pin_hash)


def test_add_bad_role_and_bad_id(capsys, stdin, ops_file: Path) -> None:
    stdin(PIN + "\n")
    code, _, err = run(capsys, "operators", "add", "d1", "--role", "pitboss", "--file", str(ops_file), "--pin-stdin")
    assert code == 2 and "invalid choice: 'pitboss'" in err
    stdin(PIN + "\n")
    code, _, err = run(capsys, "operators", "add", "Dana Lee", "--role", "dealer", "--file", str(ops_file), "--pin-stdin")
    assert code == 2 and "not a valid operator id" in err and len(err.splitlines()) == 1
    assert not ops_file.exists()


def test_remove(capsys, stdin, ops_file: Path) -> None:
    for op_id, pin in (("d1", "8042"), ("d2", "1357")):
        stdin(pin + "\n")
        assert run(capsys, "operators", "add", op_id, "--role", "dealer", "--file", str(ops_file), "--pin-stdin")[0] == 0
    code, out, err = run(capsys, "operators", "remove", "d1", "--file", str(ops_file))
    assert (code, err) == (0, "") and out == f"removed operator d1 (dealer) from {ops_file}\n"
    assert list(load_operators(ops_file)) == ["d2"]
    assert stat.S_IMODE(ops_file.stat().st_mode) == 0o600
    code, out, err = run(capsys, "operators", "remove", "d1", "--file", str(ops_file))
    assert code == 2 and err == f"shoectl operators remove: error: {ops_file}: operators.d1: no such operator\n"


def test_list_missing_file_says_how_to_start(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "none.toml"
    code, out, err = run(capsys, "operators", "list", "--file", str(missing))
    assert code == 2 and out == ""
    assert "file not found" in err and "shoectl operators add ID --role supervisor" in err
    assert len(err.splitlines()) == 1


def test_list_bad_file_is_one_line(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "o.toml"
    bad.write_text('[operators.d1]\nrole = "boss"\npin_hash = "x"\n', encoding="utf-8")
    code, _, err = run(capsys, "operators", "list", "--file", str(bad))
    assert code == 2 and err == (f"shoectl operators list: error: {bad}: operators.d1.role: "
                                 "unknown value 'boss'; allowed: dealer, floorperson, supervisor\n")


def test_list_warns_about_a_readable_file(capsys, stdin, ops_file: Path) -> None:
    stdin(PIN + "\n")
    run(capsys, "operators", "add", "d1", "--role", "dealer", "--file", str(ops_file), "--pin-stdin")
    os.chmod(ops_file, 0o644)
    code, out, err = run(capsys, "operators", "list", "--file", str(ops_file), "--json")
    assert code == 0
    assert err.startswith("shoectl operators list: warning: ") and "0644" in err
    assert json.loads(out)["warnings"] == [err.removeprefix("shoectl operators list: warning: ").rstrip("\n")]


def test_default_file_is_var_operators_toml(capsys, stdin, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    stdin(PIN + "\n")
    code, out, _ = run(capsys, "operators", "add", "s1", "--role", "supervisor", "--pin-stdin")
    assert code == 0 and out.endswith("in var/operators.toml\n")
    assert list(load_operators(tmp_path / "var" / "operators.toml")) == ["s1"]
    code, out, _ = run(capsys, "operators", "list")
    assert code == 0 and "s1" in out
    _no_pin(out)


def test_empty_file_lists_nobody(capsys, tmp_path: Path) -> None:
    f = tmp_path / "o.toml"
    f.write_text("", encoding="utf-8")
    os.chmod(f, 0o600)
    code, out, err = run(capsys, "operators", "list", "--file", str(f))
    assert (code, err) == (0, "") and out == f"no operators in {f}\n"


def test_add_into_a_folder_that_does_not_exist_is_refused(capsys, stdin, tmp_path: Path) -> None:
    """A bad-input review: ``operators add x --file /nonexistent/ops.toml`` made the folder and the
    file, where no table reads them (a mistyped folder). Only the default's ``var/`` is made."""
    stdin(PIN + "\n")
    missing = tmp_path / "no-such-folder" / "operators.toml"
    code, out, err = run(capsys, "operators", "add", "sue", "--role", "dealer", "--file", str(missing), "--pin-stdin")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert f"no such folder {missing.parent} (create it first)" in err
    assert not missing.parent.exists()


def test_add_to_the_default_file_makes_its_folder(capsys, stdin, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    stdin(PIN + "\n")
    code, out, err = run(capsys, "operators", "add", "sue", "--role", "dealer", "--pin-stdin")
    assert code == 0, err
    assert list(load_operators(tmp_path / "var" / "operators.toml")) == ["sue"]
