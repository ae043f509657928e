"""Which model a store or a setting names: the bundled contextual model, the fast static one, or a folder."""

from __future__ import annotations

from pathlib import Path

from .embedder import Embedder
from .model_spec import DEFAULT_SOURCE, default_model_spec, load_model_dir
from .static_model import STATIC_SOURCE, StaticEmbedder
from .text_embedder import TextEmbedder

# The model choices besides a model folder: "default" (all-MiniLM-L6-v2, contextual) and "fast" (Quarry's own
# static code model, for machines too slow for the contextual model).
MODEL_CHOICES = ("default", STATIC_SOURCE)


def configured_embedder(model: str = "default", model_dir: Path | None = None, provider: str = "auto") -> TextEmbedder:
    """The model the user chose: a folder wins over the named choice. Raises ModelError if it is unusable."""
    if model_dir is not None:
        return Embedder(load_model_dir(model_dir), provider_preference=provider)
    if model == STATIC_SOURCE:
        return StaticEmbedder()
    if model != "default":
        raise ValueError(f"model must be one of {', '.join(MODEL_CHOICES)}, not {model!r}")
    return Embedder(default_model_spec(), provider_preference=provider)


def embedder_for_source(source: str, provider: str = "auto") -> TextEmbedder:
    """The model a store recorded as `source` (TextEmbedder.source)."""
    if source == STATIC_SOURCE:
        return StaticEmbedder()
    if source == DEFAULT_SOURCE:
        return Embedder(default_model_spec(), provider_preference=provider)
    return Embedder(load_model_dir(Path(source)), provider_preference=provider)
