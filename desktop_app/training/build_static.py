"""One command that rebuilds the shipped static model from the committed corpus manifest:

    python -m desktop_app.training.build_static [--gpu-teacher FOLDER]

1. fetches the corpus the manifest pins (corpus.py; cached, so a second run reads nothing from the network),
2. cuts it into training texts (texts.py: 14,000 per language, seed 30),
3. trains the table (static_train.py: 3 epochs at learning rate 1e-3, no SIF weights afterwards, which lowered
   stdlib nl MRR@10 from 0.422 to 0.380 and identifier R@1 from 0.73 to 0.56),
4. mines question -> code pairs from the same corpus (pairs.py: 4,000 per language, seed 30) and moves the
   table towards them (contrastive.py: 2 epochs at learning rate 1e-3, batches of 256),
4b. a second contrastive round from that table as the app reads it (quantized), anchored to it, on more pairs
   (20,000 per language, seed 31: 83,426) for 6 epochs: at the end of stage 2 stdlib dev nl MRR@10 0.525 ->
   0.529, the held-out doc-comment sets 0.491 -> 0.495, semble-dev 0.8430 -> 0.8452 (3 epochs: 0.529, 0.495,
   0.8433; all 92,580 pairs the corpus gives, 3 epochs: 0.529, 0.495),
5. trains the query map on step 4's pairs (query_map.py: the teacher embeds each question, 5 epochs at learning
   rate 1e-3), which carries a query's contextual embedding into the table's space,
6. writes codes.npy, scales.npy and query_map.npy into the static model's folder under resources/models/ and
   prints their sha256 for embedding/static_model.py.

With --gpu-teacher (a folder holding config.json and model.fp16.safetensors, see gpu_teacher.halve) the teacher
and the training run on a GPU: about a minute in all on one H100. Without it the bundled int8 ONNX teacher runs
on the CPU, hours on a laptop's two cores.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..assets import resource_path
from ..embedding.model_spec import DEFAULT_MODEL_ID, TOKENIZER_FILE, default_model_spec
from ..embedding.static_model import CODES_FILE, QUERY_MAP_FILE, SCALES_FILE, STATIC_MODEL_ID
from . import corpus
from .contrastive import train_contrastive
from .gpu_teacher import GpuTeacher
from .pairs import mine_pairs
from .query_map import fit as fit_query_map
from .static_train import TEACHER_MAX_TOKENS, Teacher, dequantize, load_table, quantize, student_ids, train
from .text_file import write_texts
from .texts import source_files, training_texts

PER_LANGUAGE = 14_000
SEED = 30
SCHEDULE = (3, 1e-3)
PAIRS_PER_LANGUAGE = 4_000
CONTRASTIVE = (2, 1e-3)  # epochs, learning rate
SECOND_ROUND = (20_000, 31, 6, 1e-3)  # pairs per language, seed, epochs, learning rate
QUERY_MAP = (5, 1e-3)  # epochs, learning rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m desktop_app.training.build_static", description=__doc__)
    parser.add_argument("--cache", type=Path, default=corpus.DEFAULT_CACHE)
    parser.add_argument("--gpu-teacher", type=Path)
    args = parser.parse_args(argv)
    cache = args.cache.expanduser()
    if corpus.main(["fetch", "--cache", str(cache)]) != 0:
        return 1
    tokenizer = resource_path("models", DEFAULT_MODEL_ID, TOKENIZER_FILE)
    texts = training_texts(source_files(cache / "index.jsonl"), tokenizer, PER_LANGUAGE, SEED)
    write_texts(texts, cache / "texts.jsonl.xz")  # what travels to a GPU machine
    runner = (
        GpuTeacher(args.gpu_teacher, tokenizer, TEACHER_MAX_TOKENS)
        if args.gpu_teacher
        else Teacher(default_model_spec().model_path, tokenizer)
    )
    with tempfile.TemporaryDirectory() as scratch:
        report = train([t["text"] for t in texts], runner, tokenizer, Path(scratch), [SCHEDULE])
        print(report, file=sys.stderr)
        pairs = mine_pairs(source_files(cache / "index.jsonl"), PAIRS_PER_LANGUAGE, SEED)
        start = load_table(Path(scratch) / f"{SCHEDULE[0]}-{SCHEDULE[1]:g}-plain.npz")
        tuned = _contrastive_round(start, pairs, tokenizer, *CONTRASTIVE)
        per_language, seed, epochs, rate = SECOND_ROUND
        more = mine_pairs(source_files(cache / "index.jsonl"), per_language, seed)
        tuned = _contrastive_round(dequantize(*quantize(tuned)), more, tokenizer, epochs, rate)
        codes, scales = quantize(tuned)
        # The map is fitted to the table as the app reads it: after quantizing.
        query_map, losses = fit_query_map(dequantize(codes, scales), pairs, tokenizer, runner, *QUERY_MAP)
        print(f"query map, loss by epoch {losses}", file=sys.stderr)
        target = resource_path("models", STATIC_MODEL_ID)
        for name, array in ((CODES_FILE, codes), (SCALES_FILE, scales), (QUERY_MAP_FILE, query_map)):
            np.save(Path(scratch) / name, array, allow_pickle=False)
            shutil.copyfile(Path(scratch) / name, target / name)
            print(f"{name} sha256 {hashlib.sha256((target / name).read_bytes()).hexdigest()}")
    return 0


def _contrastive_round(table: np.ndarray, pairs: list[dict], tokenizer: Path, epochs: int, rate: float) -> np.ndarray:
    """The table moved towards the pairs, anchored to where it starts (contrastive.py)."""
    questions = student_ids([p["question"] for p in pairs], tokenizer)
    answers = student_ids([p["answer"] for p in pairs], tokenizer)
    tuned, losses = train_contrastive(table, questions, answers, epochs, rate)
    print(f"{len(pairs)} pairs, loss by epoch {losses}", file=sys.stderr)
    return tuned


if __name__ == "__main__":
    sys.exit(main())
