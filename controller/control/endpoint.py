"""The control socket's path: one table per socket, owner and group only, never another's.

Contract: ``ControlEndpoint(path, group=OPERATORS_GROUP, group_required=False)``.

- ``claim()`` makes ``path`` this process's: it takes an exclusive lock on ``<path>.lock`` (kept
  until ``close()``, left in place afterwards, like the journal's) and looks at what is at
  ``path``. Its folder is made if missing (the default journal's, ``var``), never the folders
  above it: ``ControlFolderUnusable`` then (``shoectl run`` refuses a ``--control`` in a folder
  that is not there before this). Another table holding the lock, or answering on the socket,
  raises ``ControlSocketInUse`` (an ``OSError``: one line, exit 2) and nothing is touched. A socket nobody
  answers on is stale (its table was killed) and is removed; anything that is not a socket is
  never replaced. A path too long for a UNIX socket is refused with the limit.
- ``listen(backlog)`` creates the socket mode 0660 (born so: no moment where others could
  connect), in group ``group`` when that group exists (``group_required``: a missing group is an
  error instead of being passed over); a group that exists but cannot be set (the user is not in
  it) is a warning in ``warnings``, not an error. ``group_used`` is the socket's group name.
- ``close()`` closes the socket and removes it only if it is still the one this process created.
"""
from __future__ import annotations

import grp
import os
import socket
import stat
from pathlib import Path
import structlog

from controller.control.client import MAX_PATH_BYTES, OPERATORS_GROUP
from controller.errors import UsageError
from controller.locks import exclusive_lock
from shoectl_config.files import group_name

SOCKET_MODE = 0o660
PROBE_TIMEOUT_S = 1.0
log = structlog.get_logger()


class ControlSocketInUse(OSError):
    """Another table holds or answers on the control socket."""


class ControlFolderUnusable(OSError):
    """The control socket's folder cannot be made, or its lock file made in it (``why``, in words)."""

    def __init__(self, folder: Path, why: str) -> None:
        super().__init__(f"{folder}: cannot make the control socket's lock file there ({why}); "
                         "give another --control path")
        self.folder = folder
        self.why = why


class ControlEndpoint:
    """See the module docstring."""

    def __init__(self, path: str | os.PathLike[str], *, group: str | None = OPERATORS_GROUP, group_required: bool = False) -> None:
        self.path = Path(path)
        self.group = group
        self.group_required = group_required
        self.group_used: str | None = None
        self.warnings: list[str] = []
        self._lock_fd: int | None = None
        self._sock: socket.socket | None = None
        self._made: tuple[int, int] | None = None  # (st_dev, st_ino) of the socket this process made
        self._gid: int | None = None

    def claim(self) -> None:
        if self._lock_fd is not None:
            return
        if len(os.fsencode(self.path)) > MAX_PATH_BYTES:
            raise OSError(f"{self.path}: too long for a UNIX socket path (at most {MAX_PATH_BYTES} bytes); "
                          "give a shorter --control path")
        gid = self._group_id()
        self._refuse_what_is_not_a_socket()  # before the lock file is made beside it
        try:
            self.path.parent.mkdir(exist_ok=True)  # never its parents: a mistyped path is refused, not made
            fd = exclusive_lock(f"{self.path}.lock", mode=0o600)
        except OSError as exc:
            why = "it is not a folder" if isinstance(exc, FileExistsError) else exc.strerror or exc
            raise ControlFolderUnusable(self.path.parent, str(why)) from None
        if fd is None:
            raise ControlSocketInUse(f"{self.path}: another table is using this control socket; "
                                     "give this table its own --control path")
        try:
            self._remove_stale()
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd = fd
        self._gid = gid

    def listen(self, backlog: int) -> socket.socket:
        self.claim()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o117)  # the socket is born 0660: no window where others could connect
        try:
            sock.bind(str(self.path))
        except OSError:
            sock.close()
            raise
        finally:
            os.umask(old)
        st = os.lstat(self.path)
        self._made = (st.st_dev, st.st_ino)
        os.chmod(self.path, SOCKET_MODE)
        self._set_group()
        sock.listen(backlog)
        self._sock = sock
        log.info("control socket ready", path=str(self.path), mode=f"{SOCKET_MODE:04o}", group=self.group_used)
        return sock

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._made is not None:
            try:
                st = os.lstat(self.path)
                if (st.st_dev, st.st_ino) == self._made:
                    self.path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:  # its folder made read-only meanwhile: the stop goes on, the journal closes
                structlog.get_logger().warning("control socket not removed; the next start replaces it",
                                               path=str(self.path), error=exc.strerror or str(exc))
            self._made = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- internals -----------------------------------------------------------------------------------
    def _group_id(self) -> int | None:
        if self.group is None:
            return None
        try:
            return grp.getgrnam(self.group).gr_gid
        except KeyError:
            if self.group_required:
                raise UsageError(f"--control-group {self.group}: no such group") from None
            return None

    def _set_group(self) -> None:
        if self._gid is not None:
            try:
                os.chown(self.path, -1, self._gid)
            except OSError as exc:
                self.warnings.append(f"control socket {self.path}: group {self.group} exists but could not be set "
                                     f"({exc.strerror}); add this user to the group")
        self.group_used = group_name(os.lstat(self.path).st_gid)

    def _refuse_what_is_not_a_socket(self) -> bool:
        """OSError when something other than a socket is at the path; whether a socket is."""
        try:
            st = os.lstat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        if not stat.S_ISSOCK(st.st_mode):
            raise OSError(f"{self.path}: exists and is not a socket; refusing to replace it")
        return True

    def _remove_stale(self) -> None:
        if not self._refuse_what_is_not_a_socket():
            return
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(PROBE_TIMEOUT_S)
        try:
            probe.connect(str(self.path))
        except (ConnectionRefusedError, FileNotFoundError):
            pass  # nobody listens: a stale socket left by a table that was killed
        except PermissionError:
            raise ControlSocketInUse(f"{self.path}: a socket this user may not open is there; if no table uses it, "
                                     "remove it, or give this table another --control path") from None
        except OSError:  # e.g. a timeout: something is there, busy
            raise ControlSocketInUse(f"{self.path}: a table may be running on this control socket (it did not "
                                     "refuse the connection); give this table another --control path") from None
        else:
            raise ControlSocketInUse(f"{self.path}: a table is running on this control socket; "
                                     "give this table another --control path")
        finally:
            probe.close()
        self.path.unlink()
