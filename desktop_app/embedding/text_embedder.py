"""What indexing and search need of an embedding model, whichever kind it is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from tokenizers import Tokenizer


class TextEmbedder(Protocol):
    """The contextual ONNX `Embedder` and the token-level `StaticEmbedder` both answer this."""

    @property
    def model_id(self) -> str: ...  # recorded in the store, so vectors of two models are never mixed

    @property
    def source(self) -> str: ...  # how to find the model again: "default", "fast" or a model folder

    @property
    def dims(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...  # the window chunks are sized for

    @property
    def provider(self) -> str: ...  # what runs the model, known after load()

    @property
    def loaded(self) -> bool: ...

    @property
    def static(self) -> bool: ...  # embeds by table look-up: no cost in a text's length worth planning for

    def load(self) -> None: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...

    def counting_tokenizer(self) -> Tokenizer:
        """The tokenizer `count_tokens` counts with (add_special_tokens=False): an index run hands it, pickled, to
        its parse processes."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...
