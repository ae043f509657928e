"""Model folders for tests that change the model: the bundled model under another id."""

from __future__ import annotations

import json
import shutil

from desktop_app.assets import resource_path
from desktop_app.embedding.model_spec import default_model_spec


def other_model_dir(tmp_path):
    """The bundled model under another id, embedding documents with a prefix (so its vectors differ)."""
    d = tmp_path / "other-model"
    d.mkdir()
    (d / "model.onnx").symlink_to(default_model_spec().model_path)
    shutil.copy(resource_path("models", "all-MiniLM-L6-v2-int8", "tokenizer.json"), d / "tokenizer.json")
    (d / "quarry-model.json").write_text(
        json.dumps(
            {"id": "minilm-passages", "dims": 384, "pooling": "mean", "max_tokens": 256, "document_prefix": "passage: "}
        )
    )
    return d
