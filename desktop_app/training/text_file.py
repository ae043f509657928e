"""Training texts on disk: one JSON object per line, xz-compressed (they travel to the training machine)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path


def write_texts(texts: list[dict], out: Path) -> None:
    with lzma.open(out, "wt", encoding="utf-8", preset=9) as handle:
        for entry in texts:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")


def read_texts(path: Path) -> list[dict]:
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]
