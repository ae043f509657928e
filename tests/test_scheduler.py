"""The worker's scheduler drives long operations as steps (indexing/steps.py): reads run between steps and while
a step waits, never inside one and never beside a write's step; a cancel reaches a step that waits; closing
the worker stops what runs. Real worker, real store; the steps are the test's own, so each event is one the
test makes happen."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from desktop_app.indexing.steps import Handoff, Wait, run_to_end
from desktop_app.worker.operations import Change, Read, StopFlag, Write

TIMEOUT_S = 60  # a safety net for a broken scheduler; every wait below ends on an event


def _long_write(log: list[str], waits_on: Future, stop: StopFlag, waiting: threading.Event | None = None) -> Write[str]:
    def steps(_engine):
        log.append("write: step 1 begins")
        log.append("write: step 1 ends")
        yield None
        log.append("write: step 2 begins")
        log.append("write: waits")
        if waiting is not None:
            waiting.set()
        yield Wait(waits_on)
        if stop():
            log.append("write: stopped")
            return "stopped"
        log.append(f"write: got {waits_on.result()}")
        return "done"

    return Write("long write", steps, Change.CONTENT, (), stop)


def _read(log: list[str], name: str) -> Read[str]:
    def run(_engine) -> str:
        log.append(f"read: {name}")
        return name

    return Read(name, run, urgent=True)


def test_a_read_queued_while_a_step_waits_runs_then_and_not_inside_a_step(tmp_path, worker_for):
    worker = worker_for(tmp_path / "index.db", model="fast")
    log: list[str] = []
    model = Future()  # the "model's" answer, resolved by the test
    write = worker.run(_long_write(log, model, StopFlag()))
    read = worker.run(_read(log, "search"))
    assert read.result(TIMEOUT_S) == "search"  # answered although the write's future is not done
    assert not write.done()
    model.set_result("vectors")
    assert write.result(TIMEOUT_S) == "done"
    # The read ran between steps or while one waited, never inside one: no read between a step's lines.
    write_lines = [line for line in log if line.startswith("write")]
    assert write_lines == [
        "write: step 1 begins",
        "write: step 1 ends",
        "write: step 2 begins",
        "write: waits",
        "write: got vectors",
    ]
    at = log.index("read: search")
    assert log[at - 1 : at] != ["write: step 1 begins"] and log[at - 1 : at] != ["write: step 2 begins"]


def test_a_write_queued_behind_a_long_write_waits_for_its_end(tmp_path, worker_for):
    worker = worker_for(tmp_path / "index.db", model="fast")
    log: list[str] = []
    model = Future()
    first = worker.run(_long_write(log, model, StopFlag()))
    second = worker.run(Write("short write", lambda _e: log.append("second write") or "ok", Change.CONTENT))
    worker.run(_read(log, "search")).result(TIMEOUT_S)  # the long write is waiting: the second write is not run
    assert "second write" not in log
    model.set_result("vectors")
    assert first.result(TIMEOUT_S) == "done" and second.result(TIMEOUT_S) == "ok"
    assert log.index("write: got vectors") < log.index("second write")


def test_a_cancel_reaches_a_step_that_waits_for_a_future_nobody_resolves(tmp_path, worker_for):
    worker = worker_for(tmp_path / "index.db", model="fast")
    log: list[str] = []
    waiting = threading.Event()
    write_op = _long_write(log, Future(), StopFlag(), waiting)  # its future never completes
    write = worker.run(write_op)
    assert waiting.wait(TIMEOUT_S)
    write_op.cancel()
    assert write.result(TIMEOUT_S) == "stopped"


def test_closing_the_worker_stops_a_waiting_write(tmp_path, worker_for):
    worker = worker_for(tmp_path / "index.db", model="fast")
    log: list[str] = []
    waiting = threading.Event()
    write = worker.run(_long_write(log, Future(), StopFlag(), waiting))
    assert waiting.wait(TIMEOUT_S)
    worker.close()
    assert write.result(TIMEOUT_S) == "stopped"


def test_a_handoff_hands_items_over_in_order_and_stops_its_producer_when_closed():
    handoff: Handoff[int | None] = Handoff(ahead=2)
    made: list[int] = []

    def produce() -> None:
        for i in range(1000):
            if not handoff.put(i):
                return
            made.append(i)

    producer = threading.Thread(target=produce)
    producer.start()

    def consume():
        taken = []
        for _ in range(5):
            item = handoff.take()
            if not item.done():
                yield Wait(item)
            taken.append(item.result())
        return taken

    assert run_to_end(consume()) == [0, 1, 2, 3, 4]
    handoff.close()
    producer.join(TIMEOUT_S)
    assert not producer.is_alive() and len(made) <= 5 + 2  # it never ran more than `ahead` items ahead
