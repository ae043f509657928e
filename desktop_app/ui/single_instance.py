"""One window per user and index: a second `quarry FOLDER` (a file manager's "Open with Quarry", a terminal)
hands the folder to the window already open, which opens it and comes to the front, instead of a second
window with a second engine on the same index.

The window listens on a local socket named after the index; a new process first tries to connect and, when
a window of this same user answers, sends one JSON line and exits.

Another local user must neither receive that line (the folder and the query) nor send the window one. On
Unix the socket therefore lives in a folder only this user can create files in (see `private_folder`), and
each end asks the kernel who the process at the other end is: a stranger is refused, and the new process
then opens a window of its own. Windows keeps its named pipe as before (Qt limits it to this user).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import stat
import struct
import sys
import tempfile
from collections.abc import Callable

import platformdirs
from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

_log = logging.getLogger(__name__)
HAND_OVER_TIMEOUT_MS = 2000  # a live window answers at once; a dead socket refuses at once


def _linux_peer_uid(sock: socket.socket) -> int:
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return uid


def _bsd_peer_uid(sock: socket.socket) -> int:
    # getpeereid()'s source: struct xucred {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t groups[16]}
    # at level SOL_LOCAL (0).
    xucred = sock.getsockopt(0, getattr(socket, "LOCAL_PEERCRED", 1), struct.calcsize("2Ih16I"))
    return struct.unpack_from("2I", xucred)[1]


_peer_uid: Callable[[socket.socket], int] | None
if sys.platform.startswith("linux"):
    _peer_uid = _linux_peer_uid
elif sys.platform == "darwin" or sys.platform.startswith(("freebsd", "dragonfly")):
    _peer_uid = _bsd_peer_uid
else:  # Windows' named pipes, or a Unix whose peer credentials differ: the private folder alone keeps others out
    _peer_uid = None


def why_not_private(folder: str) -> str | None:
    """Why other users could create or replace files in `folder`, or None when only this user can."""
    try:
        st = os.lstat(folder)  # lstat: a link would hand the socket to whoever owns its target
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid != os.getuid():
        return f"it belongs to uid {st.st_uid}"
    if st.st_mode & 0o077:
        return f"other users have access to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def private_folder() -> str:
    """The folder for the window's socket: the session's runtime folder ($XDG_RUNTIME_DIR), else a
    `quarry-<uid>` folder in the temporary folder, else one in Quarry's state folder; those two are made here
    with mode 0700. Each is used only once lstat shows it is this user's, not a link, and closed to everyone
    else: a folder someone else made first (to catch the socket) is passed over with a warning in the log.
    When none qualifies the last is returned anyway, and both ends still refuse a peer of another user."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    made = [
        os.path.join(tempfile.gettempdir(), f"quarry-{os.getuid()}"),
        str(platformdirs.user_state_path("quarry", appauthor=False) / "sockets"),
    ]
    for folder in ([runtime] if runtime else []) + made:
        if folder in made:
            try:
                os.makedirs(os.path.dirname(folder), exist_ok=True)
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass  # made by an earlier window, or by someone else: the check below tells
            except OSError as exc:
                _log.warning("cannot make %s for the window's socket: %s", folder, exc)
                continue
        why = why_not_private(folder)
        if why is None:
            return folder
        _log.warning("not putting the window's socket in %s: %s", folder, why)
    return made[-1]


def channel_name(index: str) -> str:
    """The socket's path for this user and this index (two indexes can each have their window)."""
    digest = hashlib.sha256(index.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    if not hasattr(os, "getuid"):  # Windows: a named pipe, not a file, so there is no folder to choose
        return f"quarry-{os.getlogin()}-{digest}"
    return os.path.join(private_folder(), f"quarry-{digest}")


def stranger(connection: QLocalSocket) -> str | None:
    """Why the process at the other end of `connection` is not to be trusted, or None when it runs as this
    user (or this system cannot tell, where the private folder alone keeps others out)."""
    if _peer_uid is None:
        return None
    try:
        # fromfd duplicates the descriptor, so closing this socket leaves Qt's connection open.
        with socket.fromfd(connection.socketDescriptor(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            uid = _peer_uid(sock)
    except OSError as exc:
        return f"its user cannot be read ({exc})"
    return None if uid == os.getuid() else f"it runs as uid {uid}, not {os.getuid()}"


def hand_over(name: str, message: dict) -> bool:
    """Send `message` to the window listening on `name`; False when no window of this user is there. Blocks
    for at most HAND_OVER_TIMEOUT_MS, before any window of this process exists."""
    connection = QLocalSocket()
    connection.connectToServer(name)
    if not connection.waitForConnected(HAND_OVER_TIMEOUT_MS):
        return False
    why = stranger(connection)
    if why is not None:
        _log.warning(
            "the window's socket %s is not a Quarry window of this user (%s): nothing sent, a new window opens",
            name,
            why,
        )
        connection.abort()
        return False
    connection.write((json.dumps(message) + "\n").encode())
    sent = connection.waitForBytesWritten(HAND_OVER_TIMEOUT_MS)
    connection.disconnectFromServer()
    return sent


class InstanceChannel(QObject):
    """The running window's end: `received` carries each message a later process of this user sent."""

    received = Signal(dict)

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)  # this user only
        if not self.server.listen(name):
            # A socket left by a window that crashed: nothing answered hand_over(), so it is stale.
            QLocalServer.removeServer(name)
            if not self.server.listen(name):
                _log.warning(
                    "the window cannot listen on %s (%s): a later `quarry FOLDER` opens a window of its own",
                    name,
                    self.server.errorString(),
                )
        self.server.newConnection.connect(self._accept)

    @property
    def listening(self) -> bool:
        return self.server.isListening()

    def _accept(self) -> None:
        while (connection := self.server.nextPendingConnection()) is not None:
            why = stranger(connection)
            if why is not None:
                _log.warning("refused a connection to the window's socket: %s", why)
                connection.abort()
                connection.deleteLater()
                continue
            # A method of this object, not a closure over it: a closure held by the connection would keep the
            # channel alive, and the connection's deletion could then delete the channel, and so itself again.
            connection.readyRead.connect(self._read)
            connection.disconnected.connect(connection.deleteLater)
            if connection.bytesAvailable():
                connection.readyRead.emit()

    def _read(self) -> None:
        """Each whole line a connection has sent is one message; Qt keeps a partial line until the rest comes."""
        connection = self.sender()  # only ever called by a connection's readyRead
        assert isinstance(connection, QLocalSocket)
        while connection.canReadLine():
            line = bytes(connection.readLine().data())
            try:
                message = json.loads(line)
            except ValueError:
                _log.warning("ignored a message on the window's socket that is not JSON: %r", line[:200])
                continue
            if isinstance(message, dict):
                self.received.emit(message)
