"""Running the ``shoectl`` CLI as an unprivileged user, for tests of file permissions (root ignores
them). The CLI runs in a forked child that drops to ``nobody`` when the tests run as root (and
stays the current user otherwise): no new interpreter is started, because ``nobody`` may not be
allowed to reach this one."""
from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from controller.cli import main as cli_main
from controller.rules.submission import preset_names
from controller.version import shoectl_version

UNPRIVILEGED_USER = "nobody"


def _drop_privileges() -> None:
    if os.geteuid() != 0:
        return
    user = pwd.getpwnam(UNPRIVILEGED_USER)
    os.setgroups([])
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)


def as_ids(uid: int, gid: int, umask: int) -> Callable[[], None]:
    """For ``said_as``: become ``uid`` in group ``gid`` alone, under ``umask`` (numeric ids: no
    account need exist)."""
    def become() -> None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        os.umask(umask)
    return become


def run_unprivileged(*argv: str) -> tuple[int, str, str]:
    """Run ``shoectl ARGV`` as an unprivileged user; (exit code, stdout, stderr). A traceback in
    the child is returned on stderr with exit code 99."""
    cli_main.build_parser()  # every command module is imported before the privileges go
    # This interpreter lives under /root, which the unprivileged user cannot read: what the child
    # imports lazily (the presets' resource reader) is imported here, before the privileges go.
    preset_names()
    shoectl_version()  # the journal's controller_started record reads the package metadata (cached)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 99
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
                _drop_privileges()
                try:
                    code = cli_main.main(list(argv))
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 2
            except BaseException:  # noqa: BLE001 - reported to the parent as exit 99
                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), out.read().decode(), err.read().decode()


def said_unprivileged(act: Callable[[], str]) -> str:
    """What ``act()`` returns when called as an unprivileged user, in a forked child (what it
    needs is imported already; the child never returns into pytest). A traceback in the child
    fails the caller's assertion on its exit code."""
    return said_as(act, _drop_privileges)


def said_as(act: Callable[[], str], become: Callable[[], None]) -> str:
    """What ``act()`` returns in a forked child once ``become()`` made it another account (e.g.
    ``as_ids(uid, gid, umask)``); see ``said_unprivileged``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.close(read_end)
            become()
            os.write(write_end, act().encode())
            code = 0
        except BaseException:  # noqa: BLE001 - reported to the parent as exit 99
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, said
    return said


@contextlib.contextmanager
def read_only_copy(*files: Path) -> Iterator[Path]:
    """Copies of ``files`` (mode 0444) in a directory of mode 0555 that an unprivileged user can
    reach (outside pytest's private temporary directories); yields the directory."""
    base = Path(tempfile.mkdtemp(prefix="shoectl-ro-"))
    try:
        os.chmod(base, 0o755)
        ro = base / "ro"
        ro.mkdir()
        for f in files:
            shutil.copy(f, ro / f.name)
            os.chmod(ro / f.name, 0o444)
        os.chmod(ro, 0o555)
        yield ro
    finally:
        for d in (base, base / "ro"):
            if d.exists():
                os.chmod(d, stat.S_IRWXU)
        shutil.rmtree(base)
