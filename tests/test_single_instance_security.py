"""Issue 29, N32: another local user could take the window's single-instance socket.

The socket used to live in the shared temporary folder under a name anyone can compute; a user who bound it
first received the victim's folder and query, and the victim's `quarry FOLDER` opened nothing. Now the socket
lives in a folder only its user can create files in, and both ends refuse a peer that runs as another user.

The other user is 'nobody' (uid 65534): the tests run as root, and each foreign process starts as root,
imports what it needs and then drops to 'nobody' (the interpreter may live where 'nobody' cannot read it,
as tests/reliability.py explains).
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QFileSystemWatcher, QObject, QProcess, QProcessEnvironment, Signal  # noqa: E402

from desktop_app.store.location import StoreLocation  # noqa: E402
from desktop_app.ui import single_instance  # noqa: E402
from desktop_app.ui.single_instance import InstanceChannel, channel_name, hand_over, private_folder  # noqa: E402

from .reliability import NOBODY, REPO  # noqa: E402

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to run a process as another user (uid 65534)"
)
_AS_NOBODY = f"os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})"

# Binds the socket path it is given, opens it to everyone (as the report's squatter did), says "listening",
# then reports what each connection sent until its stdin closes, and says "done".
_SQUATTER = f"""
import os, selectors, socket, sys
{_AS_NOBODY}
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
server.listen(8)
print("listening", flush=True)

def report(connection):
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    print("received:", repr(data), flush=True)

selector = selectors.DefaultSelector()
selector.register(server, selectors.EVENT_READ)
selector.register(sys.stdin, selectors.EVENT_READ)
while not any(key.fileobj is sys.stdin for key, _ in selector.select()):
    report(server.accept()[0])
server.setblocking(False)
while True:  # connections that came with the end of stdin
    try:
        report(server.accept()[0])
    except BlockingIOError:
        break
os.unlink(sys.argv[1])
print("done", flush=True)
"""

# Connects to the window's socket as another user, sends it a folder to open, and waits for the window to
# hang up (which may come before the message is all sent): "closed" then means the window is done with it.
_INTRUDER = f"""
import json, os, socket, sys
{_AS_NOBODY}
client = socket.socket(socket.AF_UNIX)
client.connect(sys.argv[1])
try:
    client.sendall((json.dumps({{"root": "/", "query": "where do we store the api token"}}) + "\\n").encode())
    client.shutdown(socket.SHUT_WR)
    while client.recv(65536):
        pass
except (BrokenPipeError, ConnectionResetError):
    pass  # the window hung up before the message was all sent
print("closed", flush=True)
"""


class _Relay(QObject):
    """One signal for several, so a test can wait for whichever of them comes first."""

    fired = Signal()


@pytest.fixture
def warnings_logged() -> Iterator[list[str]]:
    """The module's warnings, however the package's logging is set up (setup_logging stops propagation)."""
    messages: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger(single_instance.__name__)
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)


@pytest.fixture
def runtime_dir(tmp_path, monkeypatch) -> Path:
    """A session runtime folder as systemd makes it: this user's, mode 0700."""
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


def old_channel_name(index: str) -> str:
    """Where the socket used to be, as anyone could compute it: the shared temporary folder."""
    digest = hashlib.sha256(index.encode()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"quarry-{os.getuid()}-{digest}")


def squat(path: str) -> subprocess.Popen:
    squatter = subprocess.Popen(
        [sys.executable, "-c", _SQUATTER, path],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert squatter.stdout is not None
    line = squatter.stdout.readline()
    assert line == "listening\n", (line, squatter.stderr.read() if squatter.stderr else "")
    return squatter


def evict(squatter: subprocess.Popen) -> list[str]:
    """Stop the squatter; the lines it reported after "listening"."""
    out, err = squatter.communicate(input="", timeout=60)
    lines = out.splitlines()
    assert lines[-1:] == ["done"], (out, err)
    return lines[:-1]


@needs_root
def test_a_squatter_on_the_old_socket_name_gets_nothing_and_the_victim_opens_its_window(qtbot, tmp_path, runtime_dir):
    """The report's reproduction: 'nobody' binds the old predictable name, then the victim runs
    `quarry --db … FOLDER --query …`. Before, the victim printed "opens in the window already open", exited 0
    and the squatter printed the folder and the query; now the squatter hears nothing and the victim's own
    window opens and listens in the runtime folder."""
    db = tmp_path / "s2.db"
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "tokens.py").write_text("API_TOKEN_FILE = '~/.config/secret'\n")
    index = str(StoreLocation.of(str(db)))
    squatter = squat(old_channel_name(index))
    socket_path = channel_name(index)
    assert os.path.dirname(socket_path) == str(runtime_dir)

    environment = QProcessEnvironment.systemEnvironment()
    environment.insert("QT_QPA_PLATFORM", "offscreen")
    environment.insert("XDG_CONFIG_HOME", str(tmp_path / "config"))
    environment.insert("XDG_RUNTIME_DIR", str(runtime_dir))
    victim = QProcess()
    victim.setProcessEnvironment(environment)
    victim.setWorkingDirectory(str(REPO))
    relay = _Relay()
    watcher = QFileSystemWatcher([str(runtime_dir)])
    watcher.directoryChanged.connect(relay.fired)
    victim.finished.connect(relay.fired)
    query = "where do we store the api token"
    victim.start(sys.executable, ["-m", "desktop_app", "--db", str(db), str(folder), "--query", query])
    try:
        # Each change in the runtime folder, or the victim's end, is a moment to look again.
        while not os.path.exists(socket_path):
            assert victim.state() != QProcess.ProcessState.NotRunning, bytes(victim.readAllStandardError().data())
            with qtbot.waitSignal(relay.fired, timeout=120_000):
                pass
        # The window listening there is the victim's own, and takes a hand-over from its user.
        assert hand_over(socket_path, {"root": str(folder), "query": query})
        assert victim.state() != QProcess.ProcessState.NotRunning
    finally:
        victim.kill()
        victim.waitForFinished(60_000)
        received = evict(squatter)
    assert received == []
    assert "already open" not in bytes(victim.readAllStandardError().data()).decode()


@needs_root
def test_hand_over_sends_nothing_to_a_socket_of_another_user(qapp, warnings_logged):
    """Whatever folder the socket is in, a window that answers as another user is never sent the folder."""
    path = old_channel_name(str(Path(tempfile.gettempdir()) / "someone-elses.db"))
    squatter = squat(path)
    assert squatter.stdout is not None
    try:
        sent = hand_over(path, {"root": "/home/victim/project", "query": "where do we store the api token"})
        first = squatter.stdout.readline()
    finally:
        rest = evict(squatter)
    assert not sent
    assert (first, rest) == ("received: b''\n", [])  # connected, then hung up on without a byte
    assert any(f"runs as uid {NOBODY}" in message and path in message for message in warnings_logged)


@needs_root
def test_the_window_refuses_a_connection_from_another_user(qtbot, world_tmp, warnings_logged):
    """Defence in depth: were the socket reachable (here opened to everyone), another user's message is never
    obeyed; the window hangs up on it."""
    path = str(world_tmp / "quarry-window")
    channel = InstanceChannel(path)
    assert channel.listening
    os.chmod(path, 0o777)
    received: list[dict] = []
    channel.received.connect(received.append)
    intruder = QProcess()
    intruder.setWorkingDirectory(str(REPO))
    intruder.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
    with qtbot.waitSignal(intruder.finished, timeout=60_000):
        intruder.start(sys.executable, ["-c", _INTRUDER, path])
    assert bytes(intruder.readAllStandardOutput().data()).decode() == "closed\n"
    assert received == []
    assert f"refused a connection to the window's socket: it runs as uid {NOBODY}, not 0" in warnings_logged
    channel.server.close()


def test_a_socket_left_by_a_crashed_window_is_taken_over(qtbot, runtime_dir):
    """A window that crashed leaves its socket file: the next `quarry FOLDER` finds nobody there, opens its
    window, and that window takes the name over and receives what later runs hand it."""
    name = channel_name(str(runtime_dir.parent / "index.db"))
    crashed = socket.socket(socket.AF_UNIX)
    crashed.bind(name)
    crashed.close()  # the file stays, nothing listens
    assert not hand_over(name, {"root": None, "query": "x"})
    channel = InstanceChannel(name)
    assert channel.listening
    with qtbot.waitSignal(channel.received, timeout=60_000) as signal:
        assert hand_over(name, {"root": "/project", "query": "kestrel"})
    assert signal.args == [{"root": "/project", "query": "kestrel"}]
    channel.server.close()


@needs_root
def test_the_socket_folder_is_private_and_never_one_another_user_made(tmp_path, monkeypatch, warnings_logged):
    """The runtime folder when it is this user's alone; else `quarry-<uid>` in the temporary folder, made with
    mode 0700; when another user made that first (to catch the socket), or it is a link, Quarry's state folder."""
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    shared_tmp.chmod(0o1777)
    state = tmp_path / "state"
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    monkeypatch.setenv("XDG_STATE_HOME", str(state))

    open_runtime = tmp_path / "open-run"
    open_runtime.mkdir()
    open_runtime.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(open_runtime))
    own = shared_tmp / f"quarry-{os.getuid()}"
    assert private_folder() == str(own)
    assert (own.stat().st_mode & 0o777, own.stat().st_uid) == (0o700, os.getuid())
    assert any("other users have access to it (mode 755)" in message for message in warnings_logged)

    private_runtime = tmp_path / "run"
    private_runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(private_runtime))
    assert private_folder() == str(private_runtime)

    monkeypatch.delenv("XDG_RUNTIME_DIR")
    own.rmdir()
    own.mkdir(mode=0o700)
    os.chown(own, NOBODY, NOBODY)  # the squatter made it first
    assert private_folder() == str(state / "quarry" / "sockets")
    assert ((state / "quarry" / "sockets").stat().st_mode & 0o777) == 0o700
    assert any(str(own) in message and f"it belongs to uid {NOBODY}" in message for message in warnings_logged)

    own.rmdir()
    own.symlink_to(state / "quarry" / "sockets")
    assert private_folder() == str(state / "quarry" / "sockets")
    assert any("it is a symbolic link" in message for message in warnings_logged)
