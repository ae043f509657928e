"""One window per user and index: a second `quarry FOLDER` (a file manager's "Open with Quarry", a terminal)
hands the folder to the window already open, which opens it and comes to the front, instead of a second
window with a second engine on the same index.

The window listens on a local socket named after the user and the index; a new process first tries to
connect and, when something answers, sends one JSON line and exits.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

_log = logging.getLogger(__name__)
HAND_OVER_TIMEOUT_MS = 2000  # a live window answers at once; a dead socket refuses at once


def channel_name(index: str) -> str:
    """The socket's name for this user and this index (two indexes can each have their window)."""
    digest = hashlib.sha256(index.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"quarry-{os.getuid() if hasattr(os, 'getuid') else os.getlogin()}-{digest}"


def hand_over(name: str, message: dict) -> bool:
    """Send `message` to the window listening on `name`; False when no window is there. Blocks for at most
    HAND_OVER_TIMEOUT_MS, before any window of this process exists."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(HAND_OVER_TIMEOUT_MS):
        return False
    socket.write((json.dumps(message) + "\n").encode())
    sent = socket.waitForBytesWritten(HAND_OVER_TIMEOUT_MS)
    socket.disconnectFromServer()
    return sent


class InstanceChannel(QObject):
    """The running window's end: `received` carries each message a later process sent."""

    received = Signal(dict)

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)  # this user only
        if not self.server.listen(name):
            # A socket left by a window that crashed: nothing answered hand_over(), so it is stale.
            QLocalServer.removeServer(name)
            self.server.listen(name)
        self.server.newConnection.connect(self._accept)

    @property
    def listening(self) -> bool:
        return self.server.isListening()

    def _accept(self) -> None:
        while (socket := self.server.nextPendingConnection()) is not None:
            buffer = bytearray()

            def read(socket: QLocalSocket = socket, buffer: bytearray = buffer) -> None:
                buffer.extend(socket.readAll().data())
                while b"\n" in buffer:
                    line, _, rest = bytes(buffer).partition(b"\n")
                    buffer[:] = rest
                    try:
                        message = json.loads(line)
                    except ValueError:
                        _log.warning("ignored a message on the window's socket that is not JSON: %r", line[:200])
                        continue
                    if isinstance(message, dict):
                        self.received.emit(message)

            socket.readyRead.connect(read)
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                read()
