"""``TcpServer``: serve an emulated device on a loopback TCP port, for pyserial's ``socket://`` URLs.

Binds ``127.0.0.1`` only (never another interface). One host at a time: a new connection replaces
the previous one (as a new program opening a serial port would). While no host is connected the
device's bytes are lost, as on a serial line with nothing attached. ``port`` is
``socket://127.0.0.1:PORT``; ``tcp_port`` the number (``port=0`` picks a free one).

``unplug()`` closes the connection and the listening socket (connection refused until
``replug()``, which listens on the same port number again).
"""
from __future__ import annotations

import socket
from typing import Any

from .device import EmulatedDevice
from .server import DeviceServer

__all__ = ["TcpServer"]

LOOPBACK = "127.0.0.1"


class TcpServer(DeviceServer):
    """A device on ``socket://127.0.0.1:PORT``."""

    def __init__(self, device: EmulatedDevice, *, port: int = 0, **kwargs: Any) -> None:
        super().__init__(device, **kwargs)
        self.tcp_port = port
        self._listener: socket.socket | None = None
        self._client: socket.socket | None = None

    @property
    def port(self) -> str:
        return f"socket://{LOOPBACK}:{self.tcp_port}"

    @property
    def connected(self) -> bool:
        return self._client is not None

    def _open_channel(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((LOOPBACK, self.tcp_port))
            listener.listen(1)
            listener.setblocking(False)
        except BaseException:
            listener.close()
            raise
        self.tcp_port = listener.getsockname()[1]
        self._listener = listener

    def _close_channel(self) -> None:
        self._drop_client()
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def _drop_client(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except OSError:
                pass
            self._client = None
            self._unwritten.clear()

    def _read_objects(self) -> list[Any]:
        objs: list[Any] = []
        if self._listener is not None:
            objs.append(self._listener)
        if self._client is not None:
            objs.append(self._client)
        return objs

    def _on_readable(self, obj: Any) -> bytes:
        if obj is self._listener:
            try:
                client, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return b""
            self._drop_client()
            client.setblocking(False)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._client = client
            return b""
        if obj is not self._client:
            return b""
        try:
            data = obj.recv(4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            self._drop_client()
        return data

    def _write_object(self) -> Any:
        return self._client

    def _write(self, obj: Any, data: bytes) -> int:
        try:
            return obj.send(data)
        except (BrokenPipeError, ConnectionResetError):
            self._drop_client()
            return len(data)
