"""``ctl`` and the console tell their PIN only to a table run by root, by the user, or by the
account that owns the socket's folder (a security review: an account that could write to a shared
folder could put its own socket where a table's belongs and collect every PIN typed at it)."""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from controller.control.client import ControlClient, ControlUnavailable
from tests.unprivileged import UNPRIVILEGED_USER, said_unprivileged

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to listen as another user")


def _listening_as_nobody(listener: socket.socket) -> str:
    """In the unprivileged child: listen (the kernel takes the listener's credentials now), take one
    connection, answer a status, and return what the client sent."""
    listener.listen(1)
    listener.settimeout(10)
    try:
        conn, _ = listener.accept()
    except TimeoutError:
        return "<no connection>"
    with conn:
        conn.settimeout(2)
        got = b""
        try:
            while b"\n" not in got:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                got += chunk
            if got:
                conn.sendall(b'{"id": 1, "status": {}}\n')
        except (TimeoutError, OSError):
            pass
    return got.decode() or "<nothing>"


def _ask(path: Path, ask) -> tuple[str, str]:
    """Start a listener of ``nobody``'s at ``path`` (bound here), call ``ask(client)`` once it
    listens; (what the client was told, what the listener received)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    received: list[str] = []
    child = threading.Thread(target=lambda: received.append(said_unprivileged(lambda: _listening_as_nobody(listener))))
    child.start()
    told = ""
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                told = ask(ControlClient(path, timeout=5))
                break
            except ControlUnavailable as exc:
                told = str(exc)
                if "no table is listening" not in told:  # listening now: this is the answer
                    break
                time.sleep(0.02)
    finally:
        if "no table is listening" in told or not told:  # never connected: let the child's accept end
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(str(path))
        child.join(15)
        listener.close()
    return told, received[0]


@pytest.fixture
def folder():
    base = Path(tempfile.mkdtemp(prefix="shoectl-peer-"))  # outside pytest's private folders
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base)


@as_root
def test_a_pin_is_not_sent_to_a_socket_another_account_put_in_a_folder_it_does_not_own(folder: Path) -> None:
    path = folder / "control.sock"
    told, received = _ask(path, lambda c: str(c.command("op1", "482913", "status", {})))
    assert received == "<nothing>", "the impostor read the request, PIN and all"
    assert told == (f"{path}: the program listening there runs as {UNPRIVILEGED_USER}, not as root, as you, or as "
                    f"the owner of {folder} (root): nothing was sent to it (a table's control socket belongs in a "
                    "folder of the account that runs the table)")


@as_root
def test_the_account_that_owns_the_sockets_folder_is_trusted(folder: Path) -> None:
    """The service's case: the table runs as its account, in /run/shoectl, which that account owns."""
    nobody = pwd.getpwnam(UNPRIVILEGED_USER)
    own = folder / "own"
    own.mkdir()
    os.chown(own, nobody.pw_uid, nobody.pw_gid)
    told, received = _ask(own / "control.sock", lambda c: str(c.status()))
    assert '"op": "status"' in received
    assert told == "{'id': 1, 'status': {}}"



@as_root
def test_a_folder_another_account_made_where_anyone_may_make_folders_is_not_its_table_s(folder: Path) -> None:
    """A security review: an operator asking from a shared folder without --socket (the default
    var/journal.sock) had the PIN sent to another account, which had made var/ there and listened
    in it: as the owner of the socket's folder, it was taken for the table's account. Its folder is
    trusted only where no account but root or this user could have made it."""
    nobody = pwd.getpwnam(UNPRIVILEGED_USER)
    os.chmod(folder, 0o1777)  # a shared folder, as /tmp
    made = folder / "var"
    made.mkdir()
    os.chown(made, nobody.pw_uid, nobody.pw_gid)  # as that account made it
    told, received = _ask(made / "journal.sock", lambda c: str(c.command("op1", "482913", "status", {})))
    assert received == "<nothing>", "the impostor read the request, PIN and all"
    assert told == (f"{made / 'journal.sock'}: the program listening there runs as {UNPRIVILEGED_USER}, who owns "
                    f"{made}, but {folder} above it is writable by others than root and you: any of them could have "
                    "made that folder; nothing was sent to it (a table's control socket belongs in a folder of the "
                    "account that runs the table, in folders others cannot write: /run/shoectl for the service)")
    deeper = folder / "x" / "var"  # a chain of that account's folders: the first folder above not its own counts
    deeper.mkdir(parents=True)
    for made_by_it in (deeper.parent, deeper):
        os.chown(made_by_it, nobody.pw_uid, nobody.pw_gid)
    told, received = _ask(deeper / "journal.sock", lambda c: str(c.command("op1", "482913", "status", {})))
    assert received == "<nothing>" and f"who owns {deeper}, but {folder} above it is writable by others" in told
