"""The static model's whole training path on a tiny corpus: texts cut by the app's chunker, the bundled model
as teacher, the student table trained and written in the app's table format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from desktop_app.assets import resource_path
from desktop_app.embedding.model_spec import DEFAULT_MODEL_ID, TOKENIZER_FILE, default_model_spec
from desktop_app.training.static_train import STATIC_DIMS, mean_cosine, student_ids, train_table
from desktop_app.training.text_file import read_texts, write_texts
from desktop_app.training.texts import SourceFile, training_texts

from . import mixed_repo

TOKENIZER = resource_path("models", DEFAULT_MODEL_ID, TOKENIZER_FILE)
MODEL = default_model_spec().model_path


def _corpus(root: Path) -> list[SourceFile]:
    mixed_repo.build(root)
    files = []
    for path in sorted(root.rglob("*")):
        language = {".py": "python", ".ts": "typescript", ".go": "go", ".rs": "rust"}.get(path.suffix)
        if language and path.is_file():
            files.append(SourceFile(path, path.relative_to(root).as_posix(), language))
    return files


def test_the_training_texts_are_what_the_index_embeds_sampled_evenly_by_language(tmp_path):
    files = _corpus(tmp_path / "corpus")
    texts = training_texts(files, TOKENIZER, per_language=20, seed=1)
    assert texts == training_texts(files, TOKENIZER, per_language=20, seed=1)  # the same corpus, the same texts
    languages = {t["language"] for t in texts}
    assert languages == {f.language for f in files}
    assert all(sum(t["language"] == lang for t in texts) <= 20 for lang in languages)
    kinds = {t["kind"] for t in texts}
    assert {"document", "name"} <= kinds
    document = next(t["text"] for t in texts if t["kind"] == "document")
    assert any(document.startswith(f.rel_path + "\n") for f in files)  # the header the index gives a chunk
    # Cut as the index cuts them: whole definitions, not a line or two (a padding tokenizer made every line
    # count 128 tokens).
    assert max(t["text"].count("\n") for t in texts if t["kind"] == "document") >= 5

    stored = tmp_path / "texts.jsonl.xz"
    write_texts(texts, stored)
    assert read_texts(stored) == texts


def test_training_moves_the_table_towards_the_teacher_and_writes_the_app_format(tmp_path):
    files = _corpus(tmp_path / "corpus")
    texts = training_texts(files, TOKENIZER, per_language=60, seed=1)
    stored = tmp_path / "texts.jsonl.xz"
    write_texts(texts, stored)
    out = tmp_path / "model"
    done = subprocess.run(
        [sys.executable, "-m", "desktop_app.training.static_train", str(stored), "--model", str(MODEL),
         "--tokenizer", str(TOKENIZER), "--out", str(out), "--schedule", "2:1e-3"],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["texts"] == len(texts) and report["vocabulary"] == 30522
    assert set(report["held_out_cosine"]) == {"distilled-sif", "2-0.001-plain", "2-0.001-sif"}
    for name in ("2-0.001-plain", "2-0.001-sif"):
        table = np.load(out / f"{name}.npz")
        assert table["codes"].dtype == np.int8 and table["codes"].shape == (30522, STATIC_DIMS)
        assert table["scales"].shape == (30522,)


def test_each_step_lowers_the_loss_on_the_texts_it_trains_on():
    rnd = np.random.default_rng(0)
    table = rnd.normal(size=(50, 8)).astype(np.float32)
    ids = [rnd.integers(0, 50, size=rnd.integers(1, 6)) for _ in range(200)]
    targets = rnd.normal(size=(200, 8)).astype(np.float32)
    before = mean_cosine(table, ids, targets)
    after = mean_cosine(train_table(table, ids, targets, epochs=20, learning_rate=0.05, batch=32), ids, targets)
    assert after > before + 0.2
    # Read as the app's static model reads it: the identifier's own pieces, then its words.
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    [ids] = student_ids(["parseHttpHeader(x)"], TOKENIZER)
    assert [tokenizer.id_to_token(int(i)) for i in ids][-3:] == ["http", "header", "x"]
