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
from desktop_app.embedding.embedder import Embedder
from desktop_app.embedding.model_spec import DEFAULT_MODEL_ID, TOKENIZER_FILE, default_model_spec
from desktop_app.embedding.static_model import CODES_FILE, SCALES_FILE, STATIC_MODEL_ID
from desktop_app.training import query_map
from desktop_app.training.contrastive import _embed, _through_norm, batch_loss
from desktop_app.training.pairs import mine_pairs, question
from desktop_app.training.static_train import STATIC_DIMS, load_table, mean_cosine, student_ids, train_table
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


def _documented_corpus(root: Path) -> list[SourceFile]:
    """The mixed repository and a few documented functions in Go and Python."""
    files = _corpus(root)
    documented = {
        "pkg/ring.go": (
            "go",
            "package pkg\n\n// Len returns how many values the ring buffer holds right now.\n"
            "func (r *Ring) Len() int {\n\treturn r.size\n}\n\n"
            "// Push appends a value at the tail, dropping the oldest when the ring is full.\n"
            "func (r *Ring) Push(v int) {\n\tr.values[r.tail] = v\n\tr.tail = (r.tail + 1) % len(r.values)\n}\n",
        ),
        "lib/units.py": (
            "python",
            'def to_bytes(text):\n    """Parse a human size such as 10k into a count of bytes.\n\n    More.\n    """\n'
            "    return int(text[:-1]) * 1024\n\n\n"
            'def slugify(title):\n    """Turn an article title into a lowercase URL slug with dashes."""\n'
            '    return "-".join(title.lower().split())\n',
        ),
    }
    for rel, (language, text) in documented.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        files.append(SourceFile(root / rel, rel, language))
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


def _pairs_and_shipped_table(folder: Path, table_name: str) -> tuple[list[dict], list[np.ndarray]]:
    """Pairs mined from the documented corpus, written as `folder`/pairs.json, and the shipped table's (codes,
    scales), written as `folder`/`table_name` for a training command."""
    pairs = mine_pairs(_documented_corpus(folder / "corpus"), per_language=50, seed=1)
    (folder / "pairs.json").write_text(json.dumps(pairs))
    shipped = [np.load(resource_path("models", STATIC_MODEL_ID, name)) for name in (CODES_FILE, SCALES_FILE)]
    np.savez(folder / table_name, codes=shipped[0], scales=shipped[1])
    return pairs, shipped


def test_pairs_are_a_doc_comments_first_sentence_and_the_function_without_it(tmp_path):
    files = _documented_corpus(tmp_path / "corpus")
    pairs = mine_pairs(files, per_language=50, seed=1)
    assert pairs == mine_pairs(files, per_language=50, seed=1)
    asked = {p["question"]: p for p in pairs}
    assert asked["Len returns how many values the ring buffer holds right now."]["language"] == "go"
    assert "return int(text[:-1])" in asked["Parse a human size such as 10k into a count of bytes."]["answer"]
    assert {p["language"] for p in pairs} == {"go", "python", "rust"}
    for pair in pairs:
        assert len(pair["question"].split()) >= 4
        assert pair["question"] not in pair["answer"]  # the comment is the question, never part of the answer
        assert any(pair["answer"].startswith(f.rel_path + "\n") for f in files)  # the document the index embeds
    assert question(["/**", " * Parses PHP code into a node tree.", " *", " * @param code"]) == (
        "Parses PHP code into a node tree."
    )
    assert question(["-- | Get the native code generator's configuration"]) == (
        "Get the native code generator's configuration"
    )
    assert question(["// TODO: make this faster than it is"]) is None


def test_the_contrastive_gradient_is_the_losss_and_training_ranks_answers_higher(tmp_path):
    rnd = np.random.default_rng(0)
    table = rnd.normal(size=(50, 8))
    questions = [rnd.integers(0, 50, size=rnd.integers(1, 6)) for _ in range(5)]
    answers = [rnd.integers(0, 50, size=rnd.integers(1, 6)) for _ in range(5)]

    def loss(t: np.ndarray) -> float:
        (q, *_), (a, *_) = _embed(t, questions), _embed(t, answers)
        return batch_loss(q @ a.T / 0.1)[0]

    (q, qn, qf, qo), (a, an, af, ao) = _embed(table, questions), _embed(table, answers)
    _, d_sim = batch_loss(q @ a.T / 0.1)
    grad = np.zeros_like(table)
    np.add.at(grad, qf, _through_norm(d_sim @ a / 0.1, q, qn)[qo])
    np.add.at(grad, af, _through_norm(d_sim.T @ q / 0.1, a, an)[ao])
    numeric = np.zeros_like(table)
    for i, j in np.ndindex(*table.shape):
        step = np.zeros_like(table)
        step[i, j] = 1e-6
        numeric[i, j] = (loss(table + step) - loss(table - step)) / 2e-6
    assert np.abs(grad - numeric).max() < 1e-6

    # The whole step through its command, on pairs mined from real files and the shipped table.
    pairs, shipped = _pairs_and_shipped_table(tmp_path, "start.npz")
    done = subprocess.run(
        [sys.executable, "-m", "desktop_app.training.contrastive", str(tmp_path / "start.npz"),
         str(tmp_path / "pairs.json"), "--tokenizer", str(TOKENIZER), "--out", str(tmp_path / "tuned.npz"),
         "--epochs", "30", "--rate", "3e-3", "--batch", "4"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    losses = json.loads(done.stdout)["epoch_loss"]
    assert losses[-1] < losses[0]

    def margin(npz: Path) -> float:
        """How far each question's answer is ahead of its closest other answer, on average."""
        t = load_table(npz)
        (q, *_), (a, *_) = (_embed(t, student_ids([p[k] for p in pairs], TOKENIZER)) for k in ("question", "answer"))
        sims = q @ a.T
        others = np.where(np.eye(len(pairs), dtype=bool), -np.inf, sims).max(axis=1)
        return float((np.diag(sims) - others).mean())

    tuned = np.load(tmp_path / "tuned.npz")
    assert tuned["codes"].dtype == np.int8 and tuned["codes"].shape == (30522, STATIC_DIMS)
    assert margin(tmp_path / "tuned.npz") > margin(tmp_path / "start.npz")


def test_the_query_maps_gradient_is_the_losss_and_training_ranks_answers_higher(tmp_path):
    rnd = np.random.default_rng(0)
    static_q, teacher_q, answers = (rnd.normal(size=(5, d)) for d in (4, 6, 4))
    static_q, teacher_q, answers = (
        a / np.linalg.norm(a, axis=1, keepdims=True) for a in (static_q, teacher_q, answers)
    )
    start = rnd.normal(size=(6, 4)) * 0.1
    _, grad = query_map.loss_and_gradient(static_q, teacher_q, answers, start, 0.1)
    numeric = np.zeros_like(start)
    for i, j in np.ndindex(*start.shape):
        step = np.zeros_like(start)
        step[i, j] = 1e-6
        plus = query_map.loss_and_gradient(static_q, teacher_q, answers, start + step, 0.1)[0]
        minus = query_map.loss_and_gradient(static_q, teacher_q, answers, start - step, 0.1)[0]
        numeric[i, j] = (plus - minus) / 2e-6
    assert np.abs(grad - numeric).max() < 1e-6

    # The whole step through its command: pairs mined from real files, the shipped table, the bundled teacher.
    pairs, shipped = _pairs_and_shipped_table(tmp_path, "table.npz")
    done = subprocess.run(
        [sys.executable, "-m", "desktop_app.training.query_map", str(tmp_path / "table.npz"),
         str(tmp_path / "pairs.json"), "--tokenizer", str(TOKENIZER), "--model", str(MODEL),
         "--out", str(tmp_path / "map.npy"), "--epochs", "40", "--rate", "1e-2"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    losses = json.loads(done.stdout)["epoch_loss"]
    assert losses[-1] < losses[0]
    trained = np.load(tmp_path / "map.npy")
    assert trained.dtype == np.float32 and trained.shape == (384, STATIC_DIMS)

    table = shipped[0].astype(np.float32) * shipped[1][:, None]
    questions = [p["question"] for p in pairs]
    static_q = query_map.static_vectors(table, student_ids(questions, TOKENIZER))
    answers = query_map.static_vectors(table, student_ids([p["answer"] for p in pairs], TOKENIZER))
    teacher_q = Embedder().embed_documents(questions)

    def margin(m: np.ndarray) -> float:
        """How far each question's answer is ahead of its closest other answer, on average."""
        sims = query_map.mapped(static_q, teacher_q, m)[0] @ answers.T
        others = np.where(np.eye(len(pairs), dtype=bool), -np.inf, sims).max(axis=1)
        return float((np.diag(sims) - others).mean())

    assert margin(trained) > margin(np.zeros_like(trained))
