"""Embedding layer, against the real bundled model and tokenizer; only accelerators are faked."""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from desktop_app.embedding.embedder import Embedder
from desktop_app.embedding.model_spec import ModelError, ModelSpec, default_model_spec, load_model_dir
from desktop_app.embedding.providers import choose_providers, cpu_threads

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
COREML = "CoreMLExecutionProvider"

JSON_FUNCTION = '''def load_config(path):
    """Read a JSON file and return the decoded Python dict."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)'''

COOKIE_FUNCTION = '''def set_session_cookie(response, token):
    """Attach the session token to the HTTP response as a secure cookie."""
    response.set_cookie("session", token, httponly=True, secure=True, samesite="Lax")
    return response'''


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    embedder = Embedder()
    embedder.load()
    return embedder


def words(count: int) -> str:
    vocabulary = ("index", "search", "query", "vector", "token", "chunk", "file", "parser", "return")
    return " ".join(vocabulary[i % len(vocabulary)] for i in range(count))


def model_dir(tmp_path: Path, config: dict | str | None) -> Path:
    """A user model directory linking to the default model files, with `config` as quarry-model.json."""
    spec = default_model_spec()
    directory = tmp_path / "model"
    directory.mkdir()
    (directory / "model.onnx").symlink_to(spec.model_path)
    (directory / "tokenizer.json").symlink_to(spec.tokenizer_path)
    if config is not None:
        text = config if isinstance(config, str) else json.dumps(config)
        (directory / "quarry-model.json").write_text(text, encoding="utf-8")
    return directory


MINILM_CONFIG = {"id": "minilm-copy", "dims": 384, "pooling": "mean", "max_tokens": 256}


def corrupt_copy(source: Path, target: Path) -> Path:
    shutil.copyfile(source, target)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    return target


# --- shapes, normalisation, batching -------------------------------------------------------------


def test_default_spec() -> None:
    spec = default_model_spec()
    assert spec.id == "all-MiniLM-L6-v2-int8"
    assert (spec.dims, spec.pooling, spec.max_tokens) == (384, "mean", 256)
    assert spec.model_path.name == "model.onnx" and spec.model_path.is_file()
    assert spec.tokenizer_path.name == "tokenizer.json" and spec.tokenizer_path.is_file()
    assert spec.model_sha256 == "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
    assert spec.tokenizer_sha256 == "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def test_shapes_dtype_and_normalisation(embedder: Embedder) -> None:
    assert (embedder.model_id, embedder.dims, embedder.max_tokens) == ("all-MiniLM-L6-v2-int8", 384, 256)
    assert embedder.provider == CPU
    assert embedder.provider_note is None

    documents = embedder.embed_documents(["def add(a, b): return a + b", "", "README"])
    assert documents.shape == (3, 384) and documents.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(documents, axis=1), 1.0, atol=1e-5)

    query = embedder.embed_query("add two numbers")
    assert query.shape == (384,) and query.dtype == np.float32
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)

    empty = embedder.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_batch_equals_one_at_a_time_in_input_order(embedder: Embedder) -> None:
    texts = [
        "x",
        words(1500),  # truncated
        JSON_FUNCTION,
        "",
        words(3),
        COOKIE_FUNCTION,
        words(180),
        "class Foo:\n    pass",
        words(40),
        words(90),
        "SELECT * FROM users WHERE id = ?",
        words(230),
    ] * 2  # enough texts for several batches, each mixing lengths
    batched = embedder.embed_documents(texts)
    single = np.vstack([embedder.embed_documents([text]) for text in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)
    np.testing.assert_allclose(embedder.embed_documents(texts[::-1]), batched[::-1], atol=1e-4)
    assert not np.allclose(batched[0], batched[1], atol=1e-2)


def test_long_text_is_truncated_not_an_error(embedder: Embedder) -> None:
    long_text = words(5000)
    assert embedder.count_tokens([long_text])[0] > 5000
    vector = embedder.embed_documents([long_text])
    assert vector.shape == (1, 384)
    # Only the first 256 tokens count, so anything after them changes nothing.
    with_tail = embedder.embed_documents([long_text + " completely different trailing words"])
    np.testing.assert_allclose(vector, with_tail, atol=1e-6)


def test_semantic_sanity(embedder: Embedder) -> None:
    json_vec, cookie_vec = embedder.embed_documents([JSON_FUNCTION, COOKIE_FUNCTION])
    query = embedder.embed_query("parse a JSON document into Python objects")
    assert float(query @ json_vec) > float(query @ cookie_vec) + 0.1


# --- tokenizer ----------------------------------------------------------------------------------


def test_count_tokens_matches_tokenizer_without_loading_model() -> None:
    fresh = Embedder()
    texts = ["", "hello world", JSON_FUNCTION, words(600)]
    counts = fresh.count_tokens(texts)

    reference = Tokenizer.from_file(str(default_model_spec().tokenizer_path))
    reference.no_truncation()
    reference.no_padding()
    assert counts == [len(reference.encode(text, add_special_tokens=False).ids) for text in texts]
    assert counts[0] == 0 and counts[3] > 256  # no special tokens, no truncation
    assert fresh.count_tokens([]) == []
    with pytest.raises(RuntimeError):
        fresh.provider  # noqa: B018 - the model session was never created


# --- integrity and model directories ------------------------------------------------------------


def test_corrupt_tokenizer_is_rejected(tmp_path: Path) -> None:
    spec = default_model_spec()
    bad = corrupt_copy(spec.tokenizer_path, tmp_path / "tokenizer.json")
    with pytest.raises(ModelError, match="tokenizer.json.*sha256"):
        Embedder(replace(spec, tokenizer_path=bad)).count_tokens(["x"])


def test_corrupt_model_is_rejected(tmp_path: Path) -> None:
    spec = default_model_spec()
    bad = corrupt_copy(spec.model_path, tmp_path / "model.onnx")
    with pytest.raises(ModelError, match=r"model\.onnx.*sha256"):
        Embedder(replace(spec, model_path=bad)).load()


def test_model_dir_with_prefixes(tmp_path: Path, embedder: Embedder) -> None:
    config = {
        **MINILM_CONFIG,
        "query_prefix": "search_query: ",
        "document_prefix": "search_document: ",
    }
    spec = load_model_dir(model_dir(tmp_path, config))
    assert isinstance(spec, ModelSpec)
    assert (spec.id, spec.dims, spec.pooling, spec.max_tokens) == ("minilm-copy", 384, "mean", 256)
    assert spec.model_sha256 is None and spec.tokenizer_sha256 is None

    prefixed = Embedder(spec)
    assert prefixed.model_id == "minilm-copy"
    document = prefixed.embed_documents([JSON_FUNCTION])
    query = prefixed.embed_query("read json")
    expected_document = embedder.embed_documents(["search_document: " + JSON_FUNCTION])
    np.testing.assert_allclose(document, expected_document, atol=1e-5)
    np.testing.assert_allclose(query, embedder.embed_query("search_query: read json"), atol=1e-5)
    assert not np.allclose(document, embedder.embed_documents([JSON_FUNCTION]), atol=1e-3)
    assert not np.allclose(query, embedder.embed_query("read json"), atol=1e-3)
    # The prefix counts against max_tokens but never against count_tokens.
    assert prefixed.count_tokens([JSON_FUNCTION]) == embedder.count_tokens([JSON_FUNCTION])


def test_model_dir_cls_pooling(tmp_path: Path, embedder: Embedder) -> None:
    cls = Embedder(load_model_dir(model_dir(tmp_path, {**MINILM_CONFIG, "pooling": "cls"})))
    vectors = cls.embed_documents([JSON_FUNCTION, COOKIE_FUNCTION])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vectors, embedder.embed_documents([JSON_FUNCTION, COOKIE_FUNCTION]), atol=1e-2)


@pytest.mark.parametrize("missing", ["model.onnx", "tokenizer.json", "quarry-model.json"])
def test_model_dir_missing_file(tmp_path: Path, missing: str) -> None:
    directory = model_dir(tmp_path, MINILM_CONFIG)
    (directory / missing).unlink()
    with pytest.raises(ModelError, match=f"no {missing}"):
        load_model_dir(directory)


def test_model_dir_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not a directory"):
        load_model_dir(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('{"id": "x", "dims": 384,', "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ({"id": "x", "dims": 384, "pooling": "mean"}, "lacks max_tokens"),
        ({**MINILM_CONFIG, "pooling": "max"}, "'pooling' must be one of mean, cls"),
        ({**MINILM_CONFIG, "dims": "384"}, "'dims' must be a int"),
        ({**MINILM_CONFIG, "dims": True}, "'dims' must be a int"),
        ({**MINILM_CONFIG, "max_tokens": 0}, "'max_tokens' must be a positive integer"),
        ({**MINILM_CONFIG, "id": " "}, "'id' must not be empty"),
        ({**MINILM_CONFIG, "query_prefx": "q: "}, "unknown keys query_prefx"),
    ],
)
def test_model_dir_bad_config(tmp_path: Path, config: dict | str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        load_model_dir(model_dir(tmp_path, config))


def test_model_dir_wrong_dims_fails_at_load(tmp_path: Path) -> None:
    spec = load_model_dir(model_dir(tmp_path, {**MINILM_CONFIG, "dims": 768}))
    with pytest.raises(ModelError, match="384-dim vectors, not 768"):
        Embedder(spec).load()


def test_model_dir_invalid_files(tmp_path: Path) -> None:
    directory = model_dir(tmp_path, MINILM_CONFIG)
    for name in ("model.onnx", "tokenizer.json"):
        (directory / name).unlink()
        (directory / name).write_text("not a model", encoding="utf-8")
    broken = Embedder(load_model_dir(directory))
    with pytest.raises(ModelError, match="tokenizer.json is not a valid"):
        broken.count_tokens(["x"])
    with pytest.raises(ModelError, match="Cannot load the embedding model"):
        broken.load()


# --- providers and threads ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("available", "preference", "system", "expected"),
    [
        ([CPU], "auto", "Linux", [CPU]),
        ([CUDA, CPU], "auto", "Linux", [CUDA, CPU]),
        ([CUDA, CPU], "auto", "Windows", [CUDA, CPU]),
        (["DmlExecutionProvider", CPU], "auto", "Windows", [CPU]),
        ([COREML, CPU], "auto", "Darwin", [COREML, CPU]),
        ([COREML, CPU], "auto", "Linux", [CPU]),  # CoreML only counts on macOS
        ([CPU], "auto", "Darwin", [CPU]),
        ([CUDA, CPU], "cpu", "Linux", [CPU]),
        ([COREML, CPU], "cpu", "Darwin", [CPU]),
        ([CUDA, CPU], "cuda", "Linux", [CUDA, CPU]),
        ([CUDA, CPU], "cuda", "Windows", [CUDA, CPU]),
        ([CPU], "cuda", "Linux", [CPU]),
        ([COREML, CPU], "cuda", "Darwin", [CPU]),
        ([COREML, CPU], "coreml", "Darwin", [COREML, CPU]),
        ([CPU], "coreml", "Darwin", [CPU]),
        ([CUDA, CPU], "coreml", "Windows", [CPU]),
        ([CUDA], "auto", "Linux", [CUDA, CPU]),  # CPU is always the last resort
    ],
)
def test_choose_providers(available: list[str], preference: str, system: str, expected: list[str]) -> None:
    assert choose_providers(available, preference, system) == expected


def test_bad_preference_is_rejected() -> None:
    with pytest.raises(ValueError, match="auto, cpu, cuda, coreml"):
        choose_providers([CPU], "gpu", "Linux")
    with pytest.raises(ValueError, match="auto, cpu, cuda, coreml"):
        Embedder(provider_preference="gpu")


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend this onnxruntime build offers CUDA; real session creation then ignores it."""
    monkeypatch.setattr(ort, "get_available_providers", lambda: [CUDA, CPU])


@pytest.mark.usefixtures("fake_cuda")
def test_fallback_when_accelerator_fails_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    real_session = ort.InferenceSession

    def session_without_cuda(path, options=None, providers=None, **kwargs):
        if CUDA in (providers or []):
            raise RuntimeError("CUDA driver version is insufficient")
        return real_session(path, options, providers=providers, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", session_without_cuda)
    fallback = Embedder(provider_preference="cuda")
    fallback.load()
    assert fallback.provider == CPU
    assert CUDA in fallback.provider_note and "driver version is insufficient" in fallback.provider_note
    assert fallback.embed_query("hello").shape == (384,)


@pytest.mark.usefixtures("fake_cuda")
@pytest.mark.filterwarnings("ignore:Specified provider 'CUDAExecutionProvider' is not in available")
def test_fallback_when_accelerator_silently_unused() -> None:
    fallback = Embedder(provider_preference="auto")
    fallback.load()
    assert fallback.provider == CPU
    assert "could not be used" in fallback.provider_note


def test_note_when_requested_accelerator_is_missing() -> None:
    cpu_only = Embedder(provider_preference="coreml")
    cpu_only.load()
    assert cpu_only.provider == CPU
    assert "CoreMLExecutionProvider is not available" in cpu_only.provider_note


def test_cpu_threads() -> None:
    assert cpu_threads(2) == 2
    assert cpu_threads(8) == 6
    assert cpu_threads(1) == 1
    assert cpu_threads(3) == 3
    assert cpu_threads() >= 1


def test_concurrent_load(embedder: Embedder) -> None:
    shared = Embedder(threads=1)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            shared.load()
            results.append(shared.embed_query("open a file"))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors
    for result in results:
        np.testing.assert_allclose(result, embedder.embed_query("open a file"), atol=1e-5)
