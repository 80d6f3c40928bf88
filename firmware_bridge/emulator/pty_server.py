"""``PtyServer``: serve an emulated device on a pseudo-terminal behind a stable symlink.

``os.openpty()`` gives a master (the device's end) and a slave (``/dev/pts/N``, the host's end);
both are put in raw mode (``tty.setraw``) so no byte is translated or echoed. The host opens
``port``, a symlink to the slave (like a udev ``/dev/shoectl/NAME`` link), with pyserial as a real
tty; the server keeps its own slave descriptor open so the line stays up while no host has it open.

``unplug()`` closes both ends and removes the symlink: a host holding the port gets
``SerialException`` on its next read, and cannot reopen it. ``replug()`` makes a new pty (another
``/dev/pts/N``) and points the same symlink at it; the link is replaced atomically (a temporary
link and ``os.replace``), so a host never sees a half-made one.

``link`` is the symlink path; by default ``<new temp dir>/<profile name>``, removed on close. Its
folder must be there: it is never made (``FileNotFoundError`` when plugging in). A symlink already
there (a stale one) is replaced; anything else (a file, a folder) is left as it
is and plugging in raises ``FileExistsError``.
"""
from __future__ import annotations

import errno
import os
import shutil
import tempfile
import tty
from pathlib import Path
from typing import Any

from .device import EmulatedDevice
from .server import DeviceServer

__all__ = ["PtyServer"]


class PtyServer(DeviceServer):
    """A device on a pty. ``port`` is the symlink path; ``tty_path`` the current slave."""

    def __init__(self, device: EmulatedDevice, *, link: str | os.PathLike[str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(device, **kwargs)
        self._tempdir: Path | None = None
        if link is None:
            self._tempdir = Path(tempfile.mkdtemp(prefix="shoectl-emu-"))
            link = self._tempdir / device.name
        self.link = Path(link)
        self._master = -1
        self._slave = -1
        self.tty_path: str | None = None

    @property
    def port(self) -> str:
        return str(self.link)

    def _open_channel(self) -> None:
        master, slave = os.openpty()
        try:
            tty.setraw(master)
            tty.setraw(slave)
            os.set_blocking(master, False)
            path = os.ttyname(slave)
            if os.path.lexists(self.link):
                # Only a stale emulator link is replaced (to a pty that is gone: its emulator was
                # killed); a file, a folder, any other link is someone's, and a link to a live pty
                # is another emulator's port (a review: both were taken over, and removed on exit).
                if not self.link.is_symlink():
                    raise FileExistsError(errno.EEXIST, "exists and is not a link an emulator made; left as it is "
                                          "(give a free name for the port)", str(self.link))
                target = os.readlink(self.link)
                if not (target.startswith("/dev/pts/") and not os.path.exists(target)):
                    raise FileExistsError(errno.EEXIST, f"is a link to {target}, which is in use (a running "
                                          "emulator's port) or not an emulator's pty; left as it is (stop that "
                                          "emulator, or give a free name for the port)", str(self.link))
            tmp = self.link.with_name(f".{self.link.name}.{os.getpid()}.{id(self)}.tmp")
            try:
                tmp.unlink(missing_ok=True)
                os.symlink(path, tmp)
                os.replace(tmp, self.link)
            except OSError as exc:  # named by the link asked for: not the pty, nor the temporary link
                why = exc.strerror or str(exc)
                if self.link.parent.is_dir():
                    why = f"the link cannot be made there ({why})"
                raise OSError(exc.errno, why, str(self.link)) from None
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self._master, self._slave, self.tty_path = master, slave, path

    def _close_channel(self) -> None:
        try:
            if self.link.is_symlink() and os.readlink(self.link) == self.tty_path:
                self.link.unlink()
        except OSError:
            pass
        for fd in (self._master, self._slave):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = -1
        self.tty_path = None

    def _cleanup(self) -> None:
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    def _read_objects(self) -> list[Any]:
        return [self._master]

    def _on_readable(self, obj: Any) -> bytes:
        try:
            return os.read(self._master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:  # EIO: no slave open anywhere (cannot happen while we hold one)
            return b""

    def _write_object(self) -> Any:
        return self._master if self._master >= 0 else None

    def _write(self, obj: Any, data: bytes) -> int:
        return os.write(obj, data)
