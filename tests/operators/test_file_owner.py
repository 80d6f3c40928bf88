"""An integrator review: `shoectl operators add|remove` run as root rewrote the operators file as
root:root, and the table's own account (the service's `shoectl`) could no longer read it. The
new file keeps the owner and group of the one it replaces; its mode stays 0600."""
from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from cli_run import run_captured
from controller.operators.store import OperatorsError, add_operator, load_operators, remove_operator

NOBODY = 65534  # nobody / nogroup: an account other than the one running the tests
PIN = "3141"

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another account")


def _owned_by_nobody(path: Path, mode: int = 0o600) -> Path:
    add_operator(path, "s1", "supervisor", "8042")
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, mode)
    return path


def _owner_and_mode(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)


@as_root
def test_add_as_root_keeps_the_files_owner_group_and_mode(tmp_path: Path, monkeypatch) -> None:
    ops = _owned_by_nobody(tmp_path / "ops.toml")
    monkeypatch.setattr("sys.stdin", io.StringIO(PIN + "\n"))
    code, out, err = run_captured("operators", "add", "d2", "--role", "dealer", "--file", str(ops), "--pin-stdin")
    assert (code, err) == (0, ""), err
    assert out == f"added operator d2 (dealer) in {ops}\n"
    assert _owner_and_mode(ops) == (NOBODY, NOBODY, 0o600)
    assert sorted(load_operators(ops)) == ["d2", "s1"]


@as_root
def test_remove_as_root_keeps_the_files_owner_group_and_mode(tmp_path: Path) -> None:
    ops = _owned_by_nobody(tmp_path / "ops.toml")
    add_operator(ops, "d2", "dealer", PIN)
    code, out, err = run_captured("operators", "remove", "d2", "--file", str(ops))
    assert (code, err) == (0, ""), err
    assert _owner_and_mode(ops) == (NOBODY, NOBODY, 0o600)
    assert list(load_operators(ops)) == ["s1"]


@as_root
def test_a_loose_mode_is_still_repaired_and_the_owner_kept(tmp_path: Path) -> None:
    """Keeping the owner does not keep a mode that lets others read the PIN hashes."""
    ops = _owned_by_nobody(tmp_path / "ops.toml", mode=0o644)
    remove_operator(ops, "s1")
    assert _owner_and_mode(ops) == (NOBODY, NOBODY, 0o600)


@as_root
def test_the_lock_file_root_makes_goes_to_the_files_owner(tmp_path: Path) -> None:
    """A lock file root made and kept would refuse the owner's own next change (it opens it to write)."""
    ops = _owned_by_nobody(tmp_path / "ops.toml")
    lock = tmp_path / ".ops.toml.lock"
    lock.unlink()
    add_operator(ops, "d2", "dealer", PIN)
    assert _owner_and_mode(lock) == (NOBODY, NOBODY, 0o600)


def test_a_new_file_is_the_writers(tmp_path: Path) -> None:
    ops = tmp_path / "ops.toml"
    add_operator(ops, "s1", "supervisor", "8042")
    assert _owner_and_mode(ops) == (os.geteuid(), os.getegid(), 0o600)


@as_root
def test_a_symbolic_link_keeps_the_owner_of_the_file_it_points_to(tmp_path: Path) -> None:
    ops = _owned_by_nobody(tmp_path / "ops.toml")
    link = tmp_path / "link.toml"
    link.symlink_to(ops)
    add_operator(link, "d2", "dealer", PIN)
    assert link.is_symlink()
    assert _owner_and_mode(ops) == (NOBODY, NOBODY, 0o600)


def test_a_chown_not_allowed_leaves_the_file_the_writers(tmp_path: Path, monkeypatch) -> None:
    """Not root (the chown refused): the change is made all the same, the file the writer's."""
    ops = tmp_path / "ops.toml"
    add_operator(ops, "s1", "supervisor", "8042")

    def refused(*_args: object) -> None:
        raise PermissionError(1, "Operation not permitted")
    monkeypatch.setattr(os, "fchown", refused)
    add_operator(ops, "d2", "dealer", PIN)
    assert sorted(load_operators(ops)) == ["d2", "s1"]
    assert _owner_and_mode(ops) == (os.geteuid(), os.getegid(), 0o600)


@as_root
@pytest.mark.parametrize("plant", ["symlink", "hardlink"])
def test_a_planted_lock_file_never_hands_another_file_to_the_files_owner(tmp_path: Path, plant: str) -> None:
    """The folder may be the table account's (docs/deployment.md): that account could make the
    lock file a link to any file, and root, running ``operators add``, chowned the file the link
    named to it (a review of the owner-keeping change: /etc/shadow, say). A symbolic link is
    refused in one line; a hard link (a file with another name) is used as a lock, never given away."""
    ops = _owned_by_nobody(tmp_path / "ops.toml")
    victim = tmp_path / "victim"
    victim.write_text("root's secret\n", encoding="utf-8")
    os.chmod(victim, 0o600)
    lock = tmp_path / ".ops.toml.lock"
    lock.unlink(missing_ok=True)
    (lock.symlink_to if plant == "symlink" else lock.hardlink_to)(victim)
    if plant == "symlink":
        with pytest.raises(OperatorsError) as refused:
            add_operator(ops, "d2", "dealer", PIN)
        assert ".ops.toml.lock is a symbolic link, not a lock file: refused (remove it)" in str(refused.value)
        assert sorted(load_operators(ops)) == ["s1"]  # refused: nothing changed
    else:
        add_operator(ops, "d2", "dealer", PIN)
    assert _owner_and_mode(victim) == (0, 0, 0o600)
