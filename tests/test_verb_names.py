"""The verb table: learned from documented functions, shipped checked, and read the same way it was learned."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from desktop_app.embedding.model_spec import ModelError
from desktop_app.search import verb_names
from desktop_app.search.verb_names import fit_of, name_fit, name_words, word_key
from desktop_app.training import verb_names as training_verb_names
from desktop_app.training.texts import SourceFile
from desktop_app.training.verb_names import MIN_COUNT, build_table, named_questions, observation, write_table


def test_a_words_inflections_share_one_key_in_questions_and_names():
    assert {word_key(w) for w in ("removes", "remove", "removed", "removing", "Remove")} == {"remov"}
    assert {word_key(w) for w in ("entries", "entry")} == {"entry"}
    assert {word_key(w) for w in ("matches", "match")} == {"match"}
    assert word_key("class") == "class" and word_key("status") == "status"
    assert name_words("Tree.Clear") == ("clear",)
    assert name_words("sqlite3WalkSelectExpr") == ("sqlite3", "walk", "select", "expr")
    assert name_words("glm_vec2_add") == ("glm", "vec2", "add")


def test_the_shipped_table_names_what_a_verb_describes_and_its_prefixes_do_not_hide_it():
    removes = name_fit("Removes all nodes from the tree.")
    assert removes["remov"] == 1.0  # the verb itself is the word its functions hold most often
    assert 0 < removes["clear"] < 1 and 0 < removes["delet"] < 1
    assert fit_of("Clear", removes) == fit_of("Tree.Clear", removes) == removes["clear"]
    assert fit_of("sqlite3RemoveNode", removes) == 1.0  # a name's prefix does not hide the verb
    assert fit_of("Height", removes) == 0.0 and fit_of(None, removes) == 0.0
    assert name_fit("Checks if a version satisfies a constraint.")["is"] == 1.0
    assert name_fit("create a tree from its keys")["new"] == 1.0  # the base form is the same verb
    assert "get" in name_fit("Returns the element at index.")
    assert "get" not in removes
    assert name_fit("Xyzzies the frobnicator.") == {} and name_fit("") == {}


def test_a_predicates_name_fits_a_question_only_where_it_speaks_of_a_truth_value():
    """ "Return an absolute version of this path" asks for `absolute`, not `is_absolute`; "Returns true if the path is
    absolute" for `is_absolute`; "Checks if ..." asks for a predicate by its verb alone."""
    assert fit_of("is_absolute", name_fit("Return an absolute version of this path")) == 0.0
    assert not {"is", "has", "can"} & set(name_fit("Returns the next element of the iteration."))
    for question in (
        "Returns true if the path is absolute.",
        "Return whether the path is absolute",
        "Returns a boolean",
    ):
        assert fit_of("is_absolute", name_fit(question)) == name_fit(question)["is"] > 0, question
    assert fit_of("isValid", name_fit("Checks a version against a constraint.")) == 1.0
    assert fit_of("get_absolute", name_fit("Return an absolute version of this path")) == 1.0


def test_the_shipped_table_is_checked_against_its_sha256(monkeypatch):
    verb_names.table.cache_clear()
    monkeypatch.setattr(verb_names, "VERB_NAMES_SHA256", "0" * 64)
    try:
        with pytest.raises(ModelError, match="sha256"):
            name_fit("Removes all nodes from the tree.")
    finally:
        verb_names.table.cache_clear()  # read again, checked against the real digest, by the next caller


def _corpus(root: Path) -> list[SourceFile]:
    """Go and Python files of two packages whose documented functions pair three verbs with three first words of
    names, each in both packages, and "removes" with `purge` in one package only."""
    files = []
    for package, colours, sizes, jobs in (
        ("one", ("Red", "Green", "Blue"), (0, 1, 2), (0, 1, 2)),
        ("two", ("Cyan", "Magenta", "Yellow"), (3, 4, 5), (3, 4, 5)),
    ):
        go = ["package tree\n"]
        for colour in colours:  # Go's doc comments open with the name, which the table leaves out
            go.append(f"// Clear{colour} removes all {colour.lower()} values.\nfunc Clear{colour}() {{\n}}\n")
        for i in sizes:
            go.append(f"// Returns the size of table {i} in bytes.\nfunc GetSize{i}() int {{\n\treturn {i}\n}}\n")
        python = []
        for i in jobs:
            doc = f'    """Checks whether job number {i} may start now."""\n'
            python.append(f"def is_ready_{i}(job):\n{doc}    return True\n")
        if package == "one":
            go.append(
                "// Returns the size of table 0 in bytes.\nfunc GetSize0() int {\n\treturn 0\n}\n"
            )  # counted once
            for i in range(MIN_COUNT + 1):
                go.append(f"// Removes the entries older than {i} days.\nfunc purgeOld{i}() {{\n}}\n")
            python.append('def fetch_all(rows):\n    """Checks whether all the rows arrived."""\n    return rows\n')
        (root / package).mkdir()
        for rel, language, text in (("tree.go", "go", "\n".join(go)), ("jobs.py", "python", "\n".join(python))):
            (root / package / rel).write_text(text)
            files.append(SourceFile(root / package / rel, rel, language, package))
    return files


def test_the_table_is_learned_from_each_documented_functions_opening_word_and_names_first_word(tmp_path, monkeypatch):
    files = _corpus(tmp_path)
    items = [item for source in files for item in named_questions(source)]
    assert {
        "question": "ClearRed removes all red values.",
        "name": "ClearRed",
        "language": "go",
        "package": "one",
    } in items
    assert observation("ClearRed removes all red values.", "ClearRed") == ("remov", "clear")
    assert observation("Checks whether job 1 may start now.", "is_ready_1") == ("check", "is")
    table = build_table(items)
    # `GetSize0` counted once; `fetch` seen once for "checks", under MIN_COUNT; `purge` seen 6 times in one package.
    assert table == {"remov": {"clear": 1.0}, "return": {"get": 1.0}, "check": {"is": 1.0}}
    monkeypatch.setattr(training_verb_names, "MIN_PACKAGES", 1)
    assert build_table(items)["remov"] == {"clear": 1.0, "purg": 1.0}
    path = tmp_path / "verb_names.json"
    digest = write_table(table, path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert json.loads(path.read_text()) == {"verbs": table}
