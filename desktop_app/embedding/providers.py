"""Choosing ONNX Runtime execution providers and creating a session that really runs."""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Sequence
from pathlib import Path

import onnxruntime as ort

from .model_spec import ModelError, verify_sha256

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
COREML = "CoreMLExecutionProvider"

PREFERENCES = ("auto", "cpu", "cuda", "coreml")
_SHOWN = {CPU: "the CPU", CUDA: "CUDA (NVIDIA GPU)", COREML: "Core ML"}
_ACCELERATORS = {"cuda": CUDA, "coreml": COREML}


def choose_providers(available: Sequence[str], preference: str = "auto", system: str = platform.system()) -> list[str]:
    """Providers to ask ONNX Runtime for, best first; always ends with the CPU provider as the safety net."""
    if preference not in PREFERENCES:
        raise ValueError(f"provider preference must be one of {', '.join(PREFERENCES)}, not {preference!r}")
    if preference == "auto":
        if system == "Darwin" and COREML in available:
            return [COREML, CPU]
        if CUDA in available:
            return [CUDA, CPU]
        return [CPU]
    accelerator = _ACCELERATORS.get(preference)
    if accelerator is not None and accelerator in available:
        return [accelerator, CPU]
    return [CPU]


def shown_provider(provider: str) -> str:
    """A provider as people name it ("the CPU" for CPUExecutionProvider); one Quarry does not know, as it is."""
    return _SHOWN.get(provider, provider)


def cpu_threads(cores: int | None = None) -> int:
    """Intra-op threads: 75% of the cores (rounded up) so the UI and file scanning keep some CPU."""
    if cores is None:
        cores = _usable_cores()
    return max(1, math.ceil(cores * 0.75))


def _usable_cores() -> int:
    # The affinity mask honours taskset and container CPU sets; cpu_count() would oversubscribe there.
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def session_options(threads: int) -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    # One model run at a time from one worker thread: parallel execution of graph branches only adds threads.
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # The pool's threads sleep rather than spin between operators: a search embeds its query on a scan thread
    # while the worker thread reads the keyword index, and spinning threads took the core that needed (MiniLM on
    # a 14-token query, 2 threads, 2 cores: 3.9 ms alone, 9.0 ms beside a busy SQLite thread; not spinning 4.1
    # and 5.8 ms). Batches of 32 x 200 tokens embed as fast either way (1.32-1.51 s against 1.37-1.53 s).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def verified_session(
    model_path: Path, sha256: str | None, preference: str, threads: int
) -> tuple[ort.InferenceSession, str | None]:
    """create_session for a model file checked against its sha256 first (ModelError when it is not that file)."""
    verify_sha256(model_path, sha256)
    return create_session(model_path, preference, threads)


def create_session(model_path: Path, preference: str, threads: int) -> tuple[ort.InferenceSession, str | None]:
    """A session for `model_path` and, when the preferred accelerator is not in use, the reason why."""
    providers = choose_providers(ort.get_available_providers(), preference)
    accelerator = providers[0] if providers[0] != CPU else None
    note = None
    if accelerator is None and preference in _ACCELERATORS:
        note = f"{_ACCELERATORS[preference]} is not available in this onnxruntime build; using the CPU."

    if accelerator is not None:
        try:
            session = ort.InferenceSession(str(model_path), session_options(threads), providers=providers)
        except Exception as exc:  # any accelerator failure (driver, library, unsupported op) means use the CPU
            note = f"{accelerator} failed to start ({exc}); using the CPU."
        else:
            # ORT may silently drop a provider whose libraries fail to load, leaving a CPU-only session.
            if accelerator in session.get_providers():
                return session, None
            note = f"{accelerator} is installed but could not be used; using the CPU."

    try:
        session = ort.InferenceSession(str(model_path), session_options(threads), providers=[CPU])
    except Exception as exc:  # ORT raises its own, unexported exception types for invalid models
        raise ModelError(f"Cannot load the embedding model {model_path}: {exc}") from exc
    return session, note
