"""The fast model's queries: the static vector plus the default model's embedding carried by the shipped map, on
the real bundled models."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from desktop_app.assets import resource_path
from desktop_app.embedding import static_model
from desktop_app.embedding.embedder import Embedder
from desktop_app.embedding.model_spec import ModelError, default_model_spec
from desktop_app.embedding.static_model import QUERY_MAP_FILE, STATIC_MODEL_ID, StaticEmbedder
from desktop_app.worker.engine import Engine, EngineConfig

QUESTION = "decode a quoted-printable header into unicode text"


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_a_query_is_its_static_vector_plus_the_default_models_embedding_carried_by_the_shipped_map():
    fast = StaticEmbedder()
    query = fast.embed_query(QUESTION)
    own = fast.embed_documents([QUESTION])[0]
    query_map = np.load(resource_path("models", STATIC_MODEL_ID, QUERY_MAP_FILE))
    assert query_map.shape == (default_model_spec().dims, static_model.STATIC_DIMS)
    np.testing.assert_allclose(query, _unit(own + Embedder().embed_query(QUESTION) @ query_map), atol=1e-5)
    assert query.dtype == np.float32 and abs(float(np.linalg.norm(query)) - 1) < 1e-5
    assert float(query @ own) < 0.999  # the map moves the query; documents keep their static vectors
    assert fast.query_model_error is None


def test_queries_are_read_by_the_table_alone_when_the_default_model_cannot_load(tmp_path: Path):
    spec = default_model_spec()
    broken = tmp_path / "model.onnx"
    shutil.copyfile(spec.model_path, broken)
    data = bytearray(broken.read_bytes())
    data[len(data) // 2] ^= 0x01
    broken.write_bytes(bytes(data))
    fast = StaticEmbedder(query_model=Embedder(replace(spec, model_path=broken)))
    own = fast.embed_documents([QUESTION])[0]
    np.testing.assert_array_equal(fast.embed_query(QUESTION), own)
    assert fast.query_model_error is not None and "sha256" in fast.query_model_error
    np.testing.assert_array_equal(fast.embed_query("another question"), fast.embed_documents(["another question"])[0])


def test_a_damaged_query_map_is_refused(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(static_model, "QUERY_MAP_SHA256", "0" * 64)
    with pytest.raises(ModelError, match=r"query_map\.npy.*sha256"):
        StaticEmbedder().embed_query(QUESTION)


def test_the_engine_shares_its_default_model_with_the_fast_models_queries(tmp_path: Path):
    engine = Engine(EngineConfig(tmp_path / "index.db"))
    try:
        assert isinstance(engine.embedder, Embedder)
        assert engine.fast.query_model is engine.embedder
    finally:
        engine.close()
    fast_only = Engine(EngineConfig(tmp_path / "fast.db", model="fast"))
    try:
        assert fast_only.embedder is fast_only.fast
        assert fast_only.fast.query_model is None  # one of its own, loaded at the first query
    finally:
        fast_only.close()


def test_a_search_filling_in_embeds_its_query_once_for_both_layers():
    """While stage 3 fills in, the default model's embedding of a query serves both its own layer and the fast
    model's query map: the second asks for the same text and gets the same vector back."""
    shared = Embedder()
    fast = StaticEmbedder(query_model=shared)
    first = shared.embed_query(QUESTION)
    fast.embed_query(QUESTION)
    assert shared.embed_query(QUESTION) is first
    other = shared.embed_query("another question")
    assert other is not first and not np.allclose(other, first)
