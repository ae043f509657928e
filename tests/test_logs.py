"""The log file: what a window started from the desktop leaves behind when something fails."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

import pytest

from desktop_app import cli
from desktop_app.logs import LOG_FILE_NAME, log_dir, setup_logging
from desktop_app.worker.operations import Read


@pytest.fixture
def private_log(tmp_path, monkeypatch):
    """Logging set up into a folder of this test's own; the handler is removed afterwards."""
    monkeypatch.setenv("QUARRY_LOG_DIR", str(tmp_path / "logs"))
    logger = logging.getLogger("desktop_app")
    before = list(logger.handlers)
    yield tmp_path / "logs" / LOG_FILE_NAME
    for handler in logger.handlers:
        if handler not in before:
            handler.close()
            logger.removeHandler(handler)


def _read(path: Path) -> str:
    for handler in logging.getLogger("desktop_app").handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")


def test_a_failed_command_is_logged_once_per_setup(private_log, tmp_path, capsys):
    assert cli.main(["search", "anything", "--db", str(tmp_path), "--root", str(tmp_path)]) == cli.EXIT_USAGE
    assert "is a folder" in capsys.readouterr().err
    assert setup_logging() == private_log == log_dir() / LOG_FILE_NAME  # set up again: still one handler
    text = _read(private_log)
    assert "WARNING desktop_app.cli" in text and "is a folder" in text and text.count("is a folder") == 1


def test_an_engine_job_failure_is_logged_with_its_traceback(private_log, worker_for, tmp_path):
    setup_logging()
    worker = worker_for(tmp_path / "index.db")

    def broken(engine):
        raise RuntimeError("the disk said no")

    with pytest.raises(RuntimeError):
        worker.run(Read("broken", broken)).result()
    text = _read(private_log)
    assert "ERROR desktop_app.worker.worker" in text and "Traceback" in text and "the disk said no" in text


def test_an_unwritable_log_folder_does_not_stop_the_app(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("QUARRY_LOG_DIR", str(blocker / "logs"))
    assert setup_logging() is None
