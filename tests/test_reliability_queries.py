"""Parts 5 and 6 of the reliability issue: bad input, long and hostile queries, and property and fuzz tests.

Keyword queries run against real FTS5 tables (a real store); file contents go through the real reader,
chunker and indexer.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from desktop_app import cli
from desktop_app.identifiers import expand_identifiers, split_identifier
from desktop_app.indexing.chunk import Chunk
from desktop_app.indexing.chunking import chunk_file
from desktop_app.indexing.documents import keyword_fields
from desktop_app.indexing.file_selection import SelectionOptions
from desktop_app.indexing.indexer import Indexer
from desktop_app.indexing.source_reader import BINARY, MINIFIED, UNDECODABLE, SkipFile, read_source
from desktop_app.search.pipeline import Searcher
from desktop_app.search.query import MAX_TERMS, STOPWORDS, any_terms, parse
from desktop_app.search.request import SearchError, SearchRequest
from desktop_app.store.rows import ChunkRef, FileWrite, NewChunk
from desktop_app.store.sqlite.store import SqliteStore

from .reliability import check_invariants, one_line_error, quarry
from .test_chunking import check_invariants as check_chunks
from .test_chunking import count_tokens

# Characters and words FTS5 would read as syntax if they reached it unquoted.
FTS_SYNTAX = [
    '"',
    "*",
    "(",
    ")",
    "-",
    "+",
    ":",
    "^",
    "{",
    "}",
    "[",
    "]",
    ".",
    ",",
    "/",
    "\\",
    "'",
    "|",
    "&",
    "~",
    "!",
    "?",
    "<",
    ">",
    "=",
    "%",
    "$",
    "#",
    "@",
    "`",
    ";",
    " ",
    "\t",
    "\n",
    "\x00",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(",
    "col:",
    "a",
    "b_c",
    "\u00e9",
    "\u65e5",
    "0",
]
hostile_text = st.one_of(st.text(), st.lists(st.sampled_from(FTS_SYNTAX)).map("".join))


@pytest.fixture(scope="module")
def store(mixed_index, tmp_path_factory):
    db = tmp_path_factory.mktemp("queries") / "index.db"
    shutil.copy(mixed_index[0], db)
    store = SqliteStore(db)
    yield store
    store.close()


# --- part 5: arguments and long queries --------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, says",
    [
        (["search", "q", "--symbol-type", ""], "invalid symbol type"),
        (["search", "q", "--symbol-type", "Function"], "invalid symbol type"),
        (["search", "q", "--all-scopes"], "not both"),
        (["search", "q", "--root", "{root}/src/cache.py"], "is a file"),
        (["search", "q", "--model-dir", "{root}/nowhere"], "--model-dir"),
        (["search", "q", "--min-score", "nan"], "min score"),
        (["search", "q", "--glob", "!"], "invalid glob"),
        (["search", "q", "--queries-file", "{root}/nowhere.txt"], "--queries-file"),
        (["scopes", "list", "{root}"], "takes no PATH"),
        (["index", "{root}/src/cache.py"], "is a file"),
        (["search", "q", "--db", "{root}"], "is a folder"),
        (["index", ""], "path is empty"),
        (["search", "q", "--root", " "], "path is empty"),
        (["history", "-n", "99999999999999999999"], "-n must be between"),
        (["history", "-n", "0"], "-n must be between"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_arguments_are_validated_with_one_line(argv, says, store, mixed_root, capsys):
    args = [a.format(root=mixed_root) for a in argv]
    if args[0] == "search" and "--root" not in args and "--all-scopes" not in args or "--all-scopes" in args:
        args += ["--root", str(mixed_root)]
    code = cli.main([*args, "--db", str(store.path)] if "--db" not in args else args)
    err = capsys.readouterr().err.strip()
    assert code == cli.EXIT_USAGE and len(err.splitlines()) == 1 and says in err, err


def test_text_a_narrow_terminal_cannot_show_is_escaped_not_a_crash(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "greet.py").write_text(
        'def caf\u00e9_b\u00fcro():\n    """Gr\u00fc\u00dfe aus K\u00f6ln"""\n', encoding="utf-8"
    )
    db = tmp_path / "index.db"
    assert quarry("index", root, "--db", db, "--quiet", "--until", "fast").returncode == 0
    shown = quarry("search", "Gr\u00fc\u00dfe", "--root", root, "--db", db, env={"PYTHONIOENCODING": "ascii"})
    assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
    assert "caf\\xe9_b\\xfcro" in shown.stdout


def test_an_argument_in_another_encoding_is_bad_input(mixed_root, store):
    latin1_query = os.fsdecode("caf\u00e9 latte".encode("latin-1"))  # as a Latin-1 terminal would pass it
    one_line_error(quarry("search", latin1_query, "--root", mixed_root, "--db", store.path), 2, "not valid UTF-8")


def test_a_folder_named_in_another_encoding_is_explained_exactly(tmp_path):
    """Issue 15, item 9: such a folder got advice that cannot work ("set your terminal to UTF-8"; "index a
    folder inside it", whose path holds the same name). Each message names the folder, shows its bytes, what
    it reads as in Latin-1, and that it must be renamed; nothing is written to the log as a traceback."""
    folder = tmp_path / os.fsdecode("caf\u00e9".encode("latin-1"))
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "a.py").write_text("def brew():\n    pass\n")
    db = tmp_path / "index.db"
    for where, cwd in ((folder, tmp_path), (".", folder / "src")):
        proc = quarry("index", where, "--db", db, "--model", "fast", cwd=cwd)
        message = one_line_error(proc, 2, "is not UTF-8")
        assert "caf\\xe9" in message and "caf\u00e9" in message and "rename" in message, message
        assert "terminal" not in message and "inside it" not in message, message
    assert "mv $'caf\\xe9' 'caf\u00e9'" in quarry("index", folder, "--db", db).stderr


def test_a_20000_character_query_answers_in_every_mode(mixed_root, store):
    """Its speed is a figure of tests/benchmarks/bench_long_query.py, not a timed assertion here."""
    words = random.Random(3).choices(["retry", "http", "cache", "parse", "matrix", "x" * 40, "Ünïcode", "*"], k=5000)
    query = " ".join(f"{w}{i}" if i % 2 else w for i, w in enumerate(words))[:20_000]
    assert len(parse(query).words) <= MAX_TERMS and len(parse(query).identifiers) <= MAX_TERMS
    for mode in ("hybrid", "exact", "semantic"):
        proc = quarry("search", query, "--root", mixed_root, "--db", store.path, "--mode", mode, "--json")
        assert proc.returncode == 0, proc.stderr[-500:]
        payload = json.loads(proc.stdout)
        assert payload["results"], mode


def test_the_model_reads_only_the_start_of_a_long_query(embedder):
    long = " ".join(["where do we retry failed http requests"] * 300)
    assert np.allclose(embedder.embed_query(long), embedder.embed_query(long + " and also parse invoices"))


# --- part 6: the query parser against real FTS5 --------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hostile_text)
@example('"unbalanced NEAR(a b) foo* OR -x col:value')
def test_any_query_parses_into_terms_the_keyword_index_accepts(store, query):
    parsed = parse(query)
    assert len(parsed.words) <= MAX_TERMS and len(parsed.identifiers) <= MAX_TERMS
    scope = store.list_scopes()[0].scope.id
    for terms, every_term in ((list(parsed.words), True), (any_terms(parsed), False)):
        store.keyword_matches([scope], terms, every_term, 5)  # raises StoreError if FTS5 rejects its expression


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hostile_text)
def test_any_query_searches_without_error(store, mixed_root, query):
    searcher = Searcher(store, None)  # exact matching: the keyword side is what hostile text could break
    try:
        response = searcher.search(SearchRequest(query, roots=(str(mixed_root),), record_history=False))
    except SearchError as exc:
        assert not query.split() and "empty" in str(exc)
    else:
        assert all(0 <= r.score <= 1 for r in response.results)


@pytest.fixture(scope="module")
def word_store(tmp_path_factory):
    """A fresh store with a 4-dimensional test model, to write one-word files into."""
    store = SqliteStore(tmp_path_factory.mktemp("words") / "index.db")
    store.register_model("test-model", 4, "test")
    scope = store.create_scope("/words")
    yield store, scope.id
    store.close()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.from_regex(r"\w+", fullmatch=True))
@example("\u00f1and\u00fa")  # the splitter keeps only "and" of it, and that is a stopword
@example("na\u00efve")
@example("Then_")
@example("\u0130stanbul")
@example("\u01c5emal")
@example("\u00aai")
def test_a_word_in_a_file_is_found_by_searching_for_it(word_store, word):
    """Whatever the word (any script, digits, underscores), the keyword index and the query parser agree."""
    assume(word.lower() not in STOPWORDS)
    store, scope = word_store
    chunk = Chunk(f"value = {word}", 1, 1, "code")
    store.write_batch(
        scope,
        "test-model",
        [NewChunk(word, chunk.text, 3, np.ones(4, np.float32))],
        files=[
            FileWrite(
                "w.py",
                1,
                1,
                "0",
                "python",
                [ChunkRef(word, 0, 1, 1, "code", None, None, None, *keyword_fields(chunk, "w.py"))],
            )
        ],
    )
    terms = any_terms(parse(word))
    assert store.keyword_matches([scope], terms, False, 5), (word, terms)


# --- part 6: identifier splitting ---------------------------------------------------------------------

ascii_identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,30}", fullmatch=True)


@given(st.from_regex(r"\w+", fullmatch=True))
def test_any_word_splits_into_lowercase_parts(word):
    parts = split_identifier(word)
    assert all(part and part == part.lower() and not re.search(r"\s", part) for part in parts), parts
    assert parts or not word.strip("_")


@given(st.text())
def test_the_keyword_text_of_anything_keeps_every_word(text):
    assert set(re.findall(r"\w+", text)) <= set(expand_identifiers(text).split())


@given(ascii_identifier)
def test_ascii_identifiers_split_without_losing_a_character(name):
    parts = split_identifier(name)
    assert "".join(parts) == name.replace("_", "").lower()
    assert split_identifier("_".join(parts)) == parts  # snake_case of the parts splits back the same
    assert all(split_identifier(p) == [p] for p in parts)  # parts are final


@given(st.lists(st.from_regex(r"[a-z]{2,8}", fullmatch=True), min_size=1, max_size=5))
def test_camel_and_snake_case_spellings_split_alike(words):
    # Words of two letters or more: `aAA` is "a" and the acronym "AA", not three words.
    camel = words[0] + "".join(w.capitalize() for w in words[1:])
    assert split_identifier(camel) == split_identifier("_".join(words)) == words


# --- part 6: random bytes through the reader, the chunker and a real index ----------------------------

EXTENSIONS = (".py", ".js", ".md", ".json", ".rs", ".yaml", ".c")
SKIP_REASONS = {BINARY, MINIFIED, UNDECODABLE, "too_large", "unreadable"}


def _fuzz_bytes(rnd: random.Random) -> bytes:
    """Bytes that are sometimes text, sometimes nearly text and sometimes noise."""
    pieces = [
        lambda: rnd.randbytes(rnd.randrange(200)),
        lambda: "".join(rnd.choice("abc_XYZ(){}:;=+ \t\n\r\u00e9\u65e5") for _ in range(rnd.randrange(300))).encode(),
        lambda: rnd.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\r\n", b"\x00", b"\xc3", b"\n" * 5]),
        lambda: b"def f_%d(x):\n    return x\n" % rnd.randrange(1000),
        lambda: b"y" * rnd.choice([10, 999, 1001, 3000]),
    ]
    return b"".join(rnd.choice(pieces)() for _ in range(rnd.randrange(1, 8)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(st.binary(max_size=2000), st.randoms(use_true_random=False).map(_fuzz_bytes)), st.sampled_from(EXTENSIONS)
)
def test_any_bytes_are_read_and_chunked_or_skipped_with_a_reason(tmp_path_factory, content, extension):
    path = tmp_path_factory.getbasetemp() / f"fuzz{extension}"
    path.write_bytes(content)
    try:
        source = read_source(path, SelectionOptions())
    except SkipFile as skip:
        assert skip.reason in SKIP_REASONS
        return
    assert "\r" not in source.text and source.size == len(content)
    language = {
        ".py": "python",
        ".js": "javascript",
        ".md": "markdown",
        ".json": "json",
        ".rs": "rust",
        ".yaml": "yaml",
        ".c": "c",
    }[extension]
    check_chunks(source.text, chunk_file(source.text, language, path.name, count_tokens, 216, 32), 216)


@pytest.mark.parametrize("seed", [1, 2])  # fixed, so a failure replays; more seeds explore more trees
def test_a_tree_of_random_files_indexes_completely(tmp_path, embedder, seed):
    rnd = random.Random(seed)
    root = tmp_path / "fuzz"
    root.mkdir()
    for i in range(40):
        (root / f"f{i}{rnd.choice(EXTENSIONS)}").write_bytes(_fuzz_bytes(rnd))
    db = tmp_path / "index.db"
    store = SqliteStore(db)
    try:
        stats = Indexer(store, embedder).index(root)
        assert not stats.cancelled and stats.files_indexed + stats.files_skipped == 40, f"seed {seed}"
        assert set(stats.skipped) <= SKIP_REASONS, f"seed {seed}: {stats.skipped}"
        stored = store._rows(
            "SELECT f.path, fc.start_line, fc.end_line, chunk_text_of(c.text) FROM file f JOIN file_chunk fc "
            "ON fc.file_id = f.id JOIN chunk c ON c.id = fc.chunk_id"
        )
        for path, start, end, text in stored:
            lines = read_source(root / path, SelectionOptions()).text.split("\n")
            assert text == "\n".join(lines[start - 1 : end]), f"seed {seed}: {path}:{start}-{end}"
    finally:
        store.close()
    check_invariants(db, blank_files=True)
