"""Nothing Quarry or its libraries write lands outside Quarry's own folders and the index file."""

from __future__ import annotations

import os
import subprocess

from .reliability import QUARRY, REPO, WITHOUT_OVERRIDE, needs_setpriv, quarry


def test_index_and_search_write_only_into_quarrys_own_folders(tmp_path, mixed_root):
    home = tmp_path / "home"
    home.mkdir()
    db = tmp_path / "index.db"
    # The user's environment as on a fresh account: no XDG folders set, Quarry's log and settings folders at
    # their defaults under HOME (the model cache stays the test session's, so the fast model is not made again).
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.pop("QUARRY_LOG_DIR", None)
    env.pop("QUARRY_CONFIG_DIR", None)
    env["HOME"] = str(home)
    for args in (["index", mixed_root, "--until", "fast", "--quiet"], ["search", "retry", "--root", mixed_root]):
        proc = quarry(*args, "--db", db, env=env, replace_env=True)
        assert proc.returncode == 0, proc.stderr
    own = [home / ".cache" / "quarry", home / ".local" / "state" / "quarry", home / ".local" / "share" / "quarry"]
    own.append(home / ".config" / "quarry")
    written = [p for p in home.rglob("*") if p.is_file()]
    assert [p for p in written if not any(folder in p.parents for folder in own)] == []
    assert any(home / ".local" / "state" / "quarry" in p.parents for p in written)  # the log went where it should


@needs_setpriv
def test_an_unwritable_home_gets_no_library_warnings(tmp_path, mixed_root, index_copy):
    """With HOME unwritable (root without its override of file modes), ONNX Runtime's telemetry printed a
    coloured 'Failed to persist telemetry device ID' warning; with telemetry off it writes nothing there."""
    home = tmp_path / "home"
    home.mkdir(mode=0o555)
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.run(
        [*WITHOUT_OVERRIDE, *QUARRY, "search", "retry", "--root", mixed_root, "--db", index_copy],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert list(home.iterdir()) == []
