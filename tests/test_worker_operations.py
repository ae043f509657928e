"""The worker's named operations: reads run between an index run's steps, writes never do, and every write
ends with one change notice, sent before its future resolves."""

from __future__ import annotations

import shutil
import threading

import pytest

from desktop_app.search.request import SearchRequest
from desktop_app.worker import ops
from desktop_app.worker.operations import Change, Read, Write
from desktop_app.worker.ops import ScopeNotFound


@pytest.fixture
def project(tmp_path, mixed_root):
    root = tmp_path / "project"
    shutil.copytree(mixed_root, root)
    return root.resolve()


def test_a_write_waits_for_the_index_run_while_reads_are_answered_between_its_steps(
    tmp_path, project, worker_for, embedding_gate
):
    notices = []
    worker = worker_for(tmp_path / "index.db", on_change=notices.append)
    gate = embedding_gate()
    run = worker.run(ops.index(project))
    assert gate.waiting.wait(120)  # the run is inside its model stage: every file is written already
    removal = worker.run(ops.remove_scope(project))
    # A read queued now is answered while the run waits for the model; the removal waits for the whole run, so
    # the run never finds its scope deleted under it.
    search = worker.run(ops.search(SearchRequest("retry failed http requests", roots=(str(project),), mode="exact")))
    assert search.result(timeout=120).results
    assert not removal.done()
    gate.release()
    stats = run.result(timeout=300)
    assert not stats.cancelled and stats.files_indexed > 0
    assert removal.result(timeout=60) >= 0
    assert [(n.operation, n.roots) for n in notices] == [("index", (str(project),)), ("remove scope", (str(project),))]
    assert notices[0].result is stats and notices[0].changes == Change.SCOPES | Change.CONTENT
    assert worker.run(ops.scopes()).result() == []


def test_a_failed_write_is_announced_with_its_error(tmp_path, worker_for):
    notices = []
    worker = worker_for(tmp_path / "index.db", on_change=notices.append)
    with pytest.raises(ScopeNotFound):
        worker.run(ops.remove_scope(tmp_path / "never-indexed")).result(timeout=60)
    assert len(notices) == 1 and isinstance(notices[0].result, ScopeNotFound)


def test_the_notice_arrives_before_the_writes_future_resolves(tmp_path, worker_for):
    order: list[str] = []
    heard = threading.Event()

    def listener(notice) -> None:
        order.append(f"notice {notice.operation}")
        heard.set()

    worker = worker_for(tmp_path / "index.db", on_change=listener)
    future = worker.run(Write("touch", lambda engine: "done", Change.CONTENT))
    future.add_done_callback(lambda f: order.append(f"result {f.result()}"))
    assert future.result(timeout=60) == "done" and heard.wait(60)
    assert order == ["notice touch", "result done"]
    assert worker.run(Read("list scopes", lambda engine: engine.store.list_scopes())).result(timeout=60) == []
    assert order == ["notice touch", "result done"]  # a read changes nothing and says nothing
