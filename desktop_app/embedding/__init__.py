"""Text embeddings for semantic search: model registry, execution providers and the Embedder."""

from .embedder import Embedder
from .model_spec import ModelError, ModelSpec, default_model_spec, load_model_dir, model_source, spec_from_source
from .providers import choose_providers, cpu_threads

__all__ = [
    "Embedder",
    "ModelError",
    "ModelSpec",
    "choose_providers",
    "cpu_threads",
    "default_model_spec",
    "load_model_dir",
    "model_source",
    "spec_from_source",
]
