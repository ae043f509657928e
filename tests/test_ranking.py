"""Ranking evidence beyond one chunk's scores: query shape, path, file support, kinds of file, symbol windows,
and results that do not depend on how many are asked for."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from desktop_app.indexing.documents import outline_text
from desktop_app.indexing.indexer import Indexer
from desktop_app.search import fusion, pipeline
from desktop_app.search.dedup import merge_units
from desktop_app.search.evidence import (
    DOCS_FACTOR,
    KEYWORD_WEIGHT_CODE,
    KEYWORD_WEIGHT_WORDS,
    SUPERSEDED_FACTOR,
    TEST_FACTOR,
    is_test_path,
    kind_factor,
    named_after,
    path_match,
    query_evidence,
    stem,
    superseded_factors,
)
from desktop_app.search.fusion import Candidate, rank_scores
from desktop_app.search.overloads import definition_units
from desktop_app.search.pipeline import Searcher
from desktop_app.search.query import parse
from desktop_app.search.request import CODE_SEARCH_PRESET, NO_RERANK, Mode, SearchRequest
from desktop_app.store.rows import ChunkId, Hit, PlaceId
from desktop_app.store.sqlite.store import SqliteStore

# --- the evidence, piece by piece -------------------------------------------------------------------


def test_query_shape_sets_the_keyword_weight():
    assert query_evidence(parse("where do we retry failed requests")).keyword_weight == KEYWORD_WEIGHT_WORDS
    for code in ("fetch_with_retry", "HTTPError", "json.decoder.JSONDecoder", "how is parseHeader called"):
        assert query_evidence(parse(code)).keyword_weight == KEYWORD_WEIGHT_CODE, code


def test_path_words_count_with_the_file_stem_double():
    query = query_evidence(parse("bash completion generation"))
    assert path_match("bash_completions.go", query) == pytest.approx(4 / 6)  # two words in the stem
    assert path_match("completion/generate.go", query) == pytest.approx(1 / 6)  # one in a folder
    assert path_match("command.go", query) == 0
    assert stem("handlers") == "handler" and stem("entries") == "entry" and stem("class") == "class"


def test_a_path_may_name_the_query_s_words_cut_short():
    """Paths abbreviate: gin's utils.go for "utility helpers", serde's impls.rs for "implementations", nlohmann-json's
    iter_impl.hpp for "iterator implementation"; a word without its derivational ending is not cut short."""
    query = query_evidence(parse("utility helpers for path detection"))
    assert path_match("utils.go", query) == path_match("utility.go", query) > 0
    assert path_match("internal/utils/paths.go", query) == pytest.approx(3 / 8)  # a folder, then the stem
    iterator = query_evidence(parse("iterator implementation for JSON arrays"))
    assert path_match("detail/iterators/iter_impl.hpp", iterator) == pytest.approx(4 / 8)
    assert path_match("reader.go", query_evidence(parse("read the header"))) == 0


def test_docs_config_and_tests_are_discounted_unless_asked_for():
    plain = query_evidence(parse("how errors are raised"))
    assert kind_factor("src/errors.ts", plain) == 1.0
    assert kind_factor("README.md", plain) == DOCS_FACTOR
    assert kind_factor("README.md", query_evidence(parse("readme install steps"))) == 1.0
    assert kind_factor("tests/test_errors.py", plain) == TEST_FACTOR
    assert kind_factor("tests/test_errors.py", query_evidence(parse("tests for errors"))) == 1.0
    for path in (
        "pkg/errors_test.go",
        "src/__tests__/a.ts",
        "src/a.spec.ts",
        "spec/models/user_spec.rb",
        "src/test/java/FooTest.java",
        "Tests/VaporTests/RouteTests.swift",
        "test_http.py",
    ):
        assert is_test_path(path), path
    for path in ("src/testing_utils_not.py", "lib/attest.rb", "src/contest.go", "latest/x.py"):
        assert not is_test_path(path), path


def test_a_copy_under_an_older_version_folder_is_discounted_unless_the_query_names_its_version():
    paths = [
        "packages/zod/src/v3/types.ts",
        "packages/zod/src/v4/core/api.ts",
        "packages/zod/src/index.ts",
        "exposed/V1/core/Table.kt",  # alone under its folders: no newer copy to give way to
    ]
    assert superseded_factors(paths, "union schema types") == [SUPERSEDED_FACTOR, 1.0, 1.0, 1.0]
    assert superseded_factors(paths, "v3 compatibility error types") == [1.0] * 4
    assert superseded_factors(paths[2:], "union schema types") == [1.0, 1.0]
    # A v1 folder beside unversioned copies of its files is the older; a v2 folder beside them a Go module's next.
    copies = ["pydantic/v1/fields.py", "pydantic/fields.py", "pydantic/v1/env_settings.py", "api/v1/users.go"]
    assert superseded_factors(copies + ["api/handlers.go"], "model fields") == [
        SUPERSEDED_FACTOR,
        1,
        SUPERSEDED_FACTOR,
        1,
        1,
    ]
    assert superseded_factors(["mod/v2/client.go", "mod/client.go"], "client") == [1.0, 1.0]


def test_a_rust_unit_test_in_the_file_it_tests_is_discounted():
    """Rust's unit tests live in a `mod tests` of the file they test: bit-vec's `test_big_xnor` outranked
    `BitVec.xnor` for "Calculates the xnor of two bitvectors"."""
    plain = query_evidence(parse("calculates the xnor of two bitvectors"))
    assert kind_factor("src/lib.rs", plain, "tests") == kind_factor("src/lib.rs", plain, "graph.tests") == TEST_FACTOR
    assert kind_factor("src/lib.rs", plain, "BitVec") == kind_factor("src/lib.rs", plain, "Contest") == 1.0
    assert kind_factor("src/lib.rs", query_evidence(parse("tests of xnor")), "tests") == 1.0
    test, method = candidate("src/lib.rs", 1489, 0.60), candidate("src/lib.rs", 515, 0.50)
    test.hit = replace(test.hit, symbol_name="test_big_xnor", parent_symbol="tests")
    method.hit = replace(method.hit, symbol_name="xnor", parent_symbol="BitVec")
    rank_scores([test, method], parse("Calculates the xnor of two bitvectors."), "hybrid", NO_RERANK)
    assert method.score > test.score


def candidate(path: str, line: int, similarity: float, chunk_type: str = "function") -> Candidate:
    hit = Hit(
        PlaceId(line), ChunkId(line), "s", path, "python", line, line + 5, chunk_type, f"f{line}", "function",
        None, "", "", 0, 0.0,
    )  # fmt: skip
    return Candidate(hit, semantic=similarity, found_semantic=True)


def test_a_types_own_chunk_gives_way_to_the_member_a_question_describes():
    """The class header's docstring sums up every method (`HtmlDiff` outranked `HtmlDiff.make_file` for
    "Returns HTML file of side by side comparison")."""
    header = candidate("difflib.py", 1, 0.60, "type")
    method = candidate("difflib.py", 20, 0.58)
    rank_scores([header, method], parse("html file of a side by side comparison"), "hybrid", NO_RERANK)
    assert method.score > header.score


def test_a_type_gives_way_further_to_a_function_when_the_question_says_what_code_does():
    """go-toml's `Encoder` struct shares its words with "Writes the TOML encoding of v to the stream", the doc comment
    of `Encoder.Encode`: a type does nothing itself. Asked about a part of the code ("the TOML encoder and its
    stream"), the type keeps its usual share and the same scores put it first."""
    struct = candidate("marshal.go", 250, 0.575, "type")
    method = candidate("marshal.go", 280, 0.51)
    for c in (struct, method):
        c.code, c.found_keyword = c.semantic, True
    struct.keyword, method.keyword = 1.0, 0.6
    rank_scores([struct, method], parse("Writes the TOML encoding of v to the stream."), "hybrid", CODE_SEARCH_PRESET)
    assert method.score > struct.score
    rank_scores([struct, method], parse("the TOML encoder and its output stream"), "hybrid", CODE_SEARCH_PRESET)
    assert struct.score > method.score


def test_a_question_saying_what_code_does_is_not_lifted_by_the_file_holding_the_closest_meaning():
    """A doc comment's first sentence ("Returns the ...") or a request ("parse a ...") asks for the function doing
    it: the file whose best chunk means most no longer lifts its other functions above it. A noun phrase asks about
    a part of the code, where that file is the likelier answer."""
    wanted = candidate("window.py", 1, 0.55)  # its words match the question; its meaning a little less
    wanted.keyword, wanted.found_keyword = 0.6, True
    other = candidate("layout.py", 30, 0.60)  # the closest meaning, so its file's meaning is the highest
    for c in (wanted, other):
        c.code = c.semantic
    rank_scores([wanted, other], parse("window size in pixels"), "hybrid", CODE_SEARCH_PRESET)
    assert other.score > wanted.score
    for action in ("Returns the window size in pixels.", "compute the window size in pixels"):
        rank_scores([wanted, other], parse(action), "hybrid", CODE_SEARCH_PRESET)
        assert wanted.score > other.score, action


def test_a_question_saying_what_code_does_raises_the_names_its_verb_is_given():
    """ "Creates a tree holding the given keys." asks for `New`, whose name shares no word with it, not for `Put`,
    which is a little closer in meaning; asked about a part of the code, the closer one stays first."""
    new, put = candidate("tree.go", 60, 0.50), candidate("tree.go", 14, 0.56)
    new.hit, put.hit = replace(new.hit, symbol_name="New"), replace(put.hit, symbol_name="Put")
    for action in ("Creates a tree holding the given keys.", "create a tree from the given keys"):
        rank_scores([new, put], parse(action), "hybrid", NO_RERANK)
        assert new.score > put.score, action
    rank_scores([new, put], parse("tree construction from a list of keys"), "hybrid", NO_RERANK)
    assert put.score > new.score
    rank_scores([new, put], parse("Creates a tree holding the given keys."), "semantic", NO_RERANK)
    assert put.score > new.score  # semantic mode keeps its plain similarity


def test_a_question_saying_what_code_does_keeps_the_second_function_of_a_file_above_a_weaker_one_elsewhere():
    """A file's second definition gives way to other files (SATURATION) and its best one is lifted by the rest
    (FILE_SUPPORT), which finds more files for a question about a part of the code. A doc comment asks for one
    function, often the right file's second-best candidate: there the candidates keep their own order."""
    best, second = candidate("hashset.go", 58, 0.60), candidate("hashset.go", 29, 0.58)
    elsewhere = candidate("treeset.go", 40, 0.57)
    candidates = [best, second, elsewhere]
    rank_scores(candidates, parse("hash set construction from values"), "hybrid", CODE_SEARCH_PRESET)
    assert best.score > elsewhere.score > second.score
    rank_scores(candidates, parse("Creates a new set and adds the passed values."), "hybrid", CODE_SEARCH_PRESET)
    assert best.score > second.score > elsewhere.score


def test_a_question_saying_what_code_does_raises_the_overload_whose_declaration_holds_its_words():
    """ "Copies chars from a Reader to a Writer." describes the overload declared with those parameters, though the
    one from an InputStream means about the same; a name holding the question's word abbreviated (`glm_max` for
    "maximum") is raised too. A question about a part of the code, and semantic mode, keep the plain order."""
    streams, chars = candidate("CopyUtils.java", 10, 0.58), candidate("CopyUtils.java", 30, 0.56)
    streams.hit = replace(
        streams.hit, symbol_name="copy", text="public static int copy(InputStream input, OutputStream output) {"
    )
    chars.hit = replace(chars.hit, symbol_name="copy", text="public static int copy(Reader input, Writer output) {")
    rank_scores([streams, chars], parse("Copies chars from a Reader to a Writer."), "hybrid", NO_RERANK)
    assert chars.score > streams.score
    rank_scores([streams, chars], parse("char copying between a reader and a writer"), "hybrid", NO_RERANK)
    assert streams.score > chars.score
    rank_scores([streams, chars], parse("Copies chars from a Reader to a Writer."), "semantic", NO_RERANK)
    assert streams.score > chars.score
    clamp, glm_max = candidate("util.h", 10, 0.58), candidate("util.h", 40, 0.56)
    clamp.hit, glm_max.hit = replace(clamp.hit, symbol_name="glm_clamp"), replace(glm_max.hit, symbol_name="glm_max")
    rank_scores([clamp, glm_max], parse("Finds the maximum of two values."), "hybrid", NO_RERANK)
    assert glm_max.score > clamp.score


@pytest.mark.parametrize(
    ("query", "action"),
    [
        ("Returns the root message object.", True),
        ("Converts a Version object to a string.", True),
        ("Applies the patch to every file.", True),
        ("Implements the encoding.TextUnmarshaler interface.", True),
        ("parse a MIME header into its parts", True),
        ("Set the target handler for this handler.", True),
        ("Instantiates a new empty set and adds the passed values.", True),
        ("Return true if the stack is empty.", True),
        ("Check whether the path is absolute.", True),
        ("Copy data and metadata.", True),  # a sentence: the verb says what the code does, its object is bare
        ("Parse XML document from string.", True),
        ("copy data and metadata", False),
        ("Headers and individual Header types", False),
        ("Log formatting and handlers", False),  # "log" is a noun here: no object follows it
        ("how are URL routes registered and matched", False),
        ("immutable pair container for two related values", False),
        ("Is a DecodeHookFunc which adds support for weak typing", False),
        ("Process", False),
    ],
)
def test_a_query_saying_what_code_does_is_told_from_one_naming_a_part_of_it(query, action):
    assert parse(query).describes_an_action is action
    # such a question asks for a function, whose name often restates it: the fast layer weighs the name more
    expected = fusion.FAST_NAME_WEIGHT_ACTION if action else fusion.FAST_NAME_WEIGHT
    assert fusion.fast_name_weight(parse(query)) == expected > 0


def test_the_public_function_outranks_the_private_helper_it_calls():
    """ "Recursively copy a directory tree" describes `copytree` and the `_copytree` doing its work alike."""
    helper, public = candidate("shutil.py", 1, 0.66), candidate("shutil.py", 40, 0.585)
    helper.hit = replace(helper.hit, symbol_name="_copytree")
    rank_scores([helper, public], parse("recursively copy a directory tree"), "hybrid", CODE_SEARCH_PRESET)
    assert public.score > helper.score


def test_of_the_definitions_named_the_one_in_the_file_named_after_it_comes_first():
    """`Application` in Vapor: Swift extensions in `Application+Sessions.swift` define the name too."""
    extension = candidate("Sessions/Application+Sessions.swift", 3, 0.60)
    home = candidate("Application.swift", 7, 0.50)
    for c in (extension, home):
        c.hit, c.exact_symbol = replace(c.hit, symbol_name="Application", symbol_type="class"), True
    for mode in ("hybrid", "exact"):
        rank_scores([extension, home], parse("Application"), mode, CODE_SEARCH_PRESET)
        assert home.score > extension.score >= 0.95, mode
    assert named_after("sync/semaphore.rs", "Semaphore") and not named_after("sync/batch_semaphore.rs", "Semaphore")


def test_a_file_with_several_good_matches_raises_its_best_one_and_keeps_its_order():
    """semble-dev's answers are files: three good hits in one file say more than one slightly better hit
    elsewhere. The file's other chunks keep their order under its best one."""

    lone = candidate("alone.py", 1, 0.60)
    best, second, third = (candidate("several.py", line, s) for line, s in ((10, 0.58), (20, 0.55), (30, 0.50)))
    rank_scores([lone, best, second, third], parse("how are requests retried"), "hybrid", NO_RERANK)
    assert best.score > lone.score > second.score > third.score


def test_a_file_whose_code_means_the_question_raises_the_chunk_it_ranks_first(monkeypatch):
    """A file's best-ranked chunk is often there for its name or words, while another chunk of the same file is
    the closest in meaning: the file's best code cosine speaks for it (`CacheManager.driver` for "cache store
    driver abstraction", whose `Repository` answers it)."""
    named, meant = candidate("src/one.php", 1, 0.50), candidate("src/one.php", 20, 0.40)
    other, other_too = candidate("src/two.php", 1, 0.52), candidate("src/two.php", 20, 0.42)
    for c, code in ((named, 0.45), (meant, 0.70), (other, 0.50), (other_too, 0.30)):
        c.code = code
    query = parse("cache store repository and driver abstraction")
    for file_meaning, first in ((0.0, other), (fusion.FILE_MEANING, named)):
        monkeypatch.setattr(fusion, "FILE_MEANING", file_meaning)
        monkeypatch.setattr(fusion, "FILE_MEANING_BEST", file_meaning and fusion.FILE_MEANING_BEST)
        rank_scores([named, meant, other, other_too], query, "hybrid", NO_RERANK)
        assert max((named, other), key=lambda c: c.score) is first
        assert named.score > meant.score  # the order within the file stays


def test_the_file_whose_outline_answers_the_question_raises_its_best_chunk(embedder):
    """Two files whose best chunks say about as much (paths that say nothing): the one whose names, read
    together, answer the question comes first; a query that is only a name is left to the names."""
    question = "registry of the classes that parse email headers"
    q = embedder.embed_query(question)
    outlines = embedder.embed_documents(
        [outline_text("lib/a.py", ["Address", "Group", "HeaderRegistry"]), outline_text("lib/b.py", ["parsedate"])]
    )
    headers, dates = (float(v @ q) for v in outlines)
    assert headers > dates
    by_headers, by_dates = candidate("lib/a.py", 1, 0.50), candidate("lib/b.py", 2, 0.51)
    # The same code cosine (so the files' best code says as much), a name cosine a little apart.
    for c, outline in ((by_headers, headers), (by_dates, dates)):
        c.code, c.outline = 0.5, outline
    rank_scores([by_headers, by_dates], parse(question), "hybrid", NO_RERANK)
    assert by_headers.score > by_dates.score
    by_headers.outline = by_dates.outline = None  # no outline vectors yet: the chunks' own evidence decides
    rank_scores([by_headers, by_dates], parse(question), "hybrid", NO_RERANK)
    assert by_dates.score > by_headers.score
    by_headers.outline, by_dates.outline = headers, dates
    rank_scores([by_headers, by_dates], parse("parsedate"), "hybrid", NO_RERANK)
    assert by_dates.score > by_headers.score


def test_in_a_sentence_no_name_takes_the_name_tier():
    """ "how pandoc converts a document to LaTeX" is about LaTeX output, not a function `latex`; `LaTeX` alone
    still puts `latex` first."""
    named, writer = candidate("Citeproc/BibTeX.hs", 1, 0.40), candidate("Writers/Output.hs", 9, 0.60)
    named.hit, named.exact_symbol, named.keyword = replace(named.hit, symbol_name="latex"), True, 1.0
    writer.keyword = 0.8
    rank_scores([named, writer], parse("how pandoc converts a document to LaTeX"), "hybrid", CODE_SEARCH_PRESET)
    assert writer.score > named.score
    rank_scores([named, writer], parse("LaTeX"), "hybrid", CODE_SEARCH_PRESET)
    assert named.score > writer.score


def test_a_type_a_doc_comment_names_gives_way_to_the_function_it_describes():
    """Go's doc comment "Returns a DecodeHookFunc that converts strings to net.IP" is a question about the function
    that returns one: the type `DecodeHookFunc`, named as typed, used to take the name tier above it. Named among
    code-like words (`DecodeHookFunc and StringToIPHookFunc`) or alone, the type still comes first."""
    named = candidate("mapstructure.go", 171, 0.45, "type")
    named.hit, named.exact_symbol, named.keyword = replace(named.hit, symbol_name="DecodeHookFunc"), True, 1.0
    function = candidate("decode_hooks.go", 140, 0.62)
    function.hit, function.keyword = replace(function.hit, symbol_name="StringToIPHookFunc"), 0.5
    question = parse("Returns a DecodeHookFunc that converts strings to net.IP")
    assert question.is_sentence
    rank_scores([named, function], question, "hybrid", CODE_SEARCH_PRESET)
    assert function.score > named.score
    for code in ("DecodeHookFunc", "DecodeHookFunc and StringToIPHookFunc", "type DecodeHookFunc"):
        assert not parse(code).is_sentence, code
        rank_scores([named, function], parse(code), "hybrid", CODE_SEARCH_PRESET)
        assert named.score >= fusion.EXACT_TIER > function.score, code


def test_the_type_names_a_question_writes():
    assert parse("Request type and HTTP request representation in Vapor").type_names == {"Request", "Vapor"}
    assert parse("how Rails::Engine loads its paths, and Flask's `Blueprint`").type_names == {
        "Engine",
        "Flask",
        "Blueprint",
    }
    # Acronyms, snake-case names, the parts of a hyphenated word: not a type's name.
    assert parse("Header-encode a JSON string with from_json and ok.").type_names == frozenset()


def test_the_file_named_after_a_type_a_question_writes_is_raised():
    """vapor's "Request type and HTTP request representation" asks for Request.swift; the words it matches in a
    path favoured HTTPServerRequestDecoder.swift. A question that says what code does asks for a function, not a
    file named so."""
    named = candidate("Sources/Vapor/Request/Request.swift", 325, 0.50)
    worded = candidate("Sources/Vapor/HTTP/Server/HTTPServerRequestDecoder.swift", 46, 0.52)
    rank_scores([named, worded], parse("Request type and HTTP request representation"), "hybrid", NO_RERANK)
    assert named.score > worded.score
    rank_scores([named, worded], parse("request type and HTTP request representation"), "hybrid", NO_RERANK)
    assert worded.score > named.score  # not written as a type's name
    header, message = candidate("email/Header.py", 10, 0.50), candidate("email/message.py", 90, 0.52)
    action = parse("Returns the Header of a message")
    assert action.describes_an_action and "Header" in action.type_names
    rank_scores([header, message], action, "hybrid", NO_RERANK)
    assert message.score > header.score


def test_a_test_named_after_the_question_stays_discounted():
    """nvm's test scripts are named after the function they test (`test/fast/Unit tests/nvm_download`): the raise
    for the query's words in the path is discounted with the rest of a test's score."""
    test = candidate("test/fast/Unit tests/nvm_download_artifact error propagation", 30, 0.60)
    code = candidate("nvm.sh", 125, 0.55)
    rank_scores([test, code], parse("download artifact error propagation"), "hybrid", NO_RERANK)
    assert code.score > test.score


def test_a_types_header_cut_into_windows_is_one_result_spanning_them():
    """`Rack::Builder`'s doc comment is long: its header comes in two windows, and its result shows both (a long
    function's result stays its best window)."""
    from desktop_app.search.pipeline import _fold_window

    lines = [f"# line {n}" for n in range(1, 41)]

    def window(start: int, end: int, chunk_type: str) -> Candidate:
        c = candidate("builder.rb", start, 0.5, chunk_type)
        c.hit = replace(c.hit, start_line=start, end_line=end, text="\n".join(lines[start - 1 : end]))
        return c

    best, other = window(9, 34, "type"), window(30, 39, "type")
    _fold_window(best, other)
    assert (best.hit.start_line, best.hit.end_line) == (9, 39) and best.hit.text == "\n".join(lines[8:39])
    body, rest = window(9, 34, "function"), window(30, 39, "function")
    _fold_window(body, rest)
    assert (body.hit.start_line, body.hit.end_line) == (9, 34)
    apart = window(9, 20, "type")
    _fold_window(apart, window(30, 39, "type"))  # windows that do not meet leave the lines between unknown
    assert (apart.hit.start_line, apart.hit.end_line) == (9, 20)


def test_windows_of_one_definition_fold_into_the_best_one():
    ranked = [("f", 100, 140), ("g", 1, 30), ("f", 1, 41), (None, 1, 5), (None, 6, 9), ("f", 41, 81)]
    folded: list[tuple] = []
    kept = merge_units(ranked, lambda r: r[0], lambda k, d: folded.append((k, d)))
    assert kept == [("f", 100, 140), ("g", 1, 30), (None, 1, 5), (None, 6, 9)]
    assert folded == [(("f", 100, 140), ("f", 1, 41)), (("f", 100, 140), ("f", 41, 81))]


def _method(start: int, end: int, text: str, score: float, name: str = "copy") -> Candidate:
    hit = Hit(
        PlaceId(start), ChunkId(start), "s", "src/CopyUtils.java", "java", start, end, "function", name, "method",
        "CopyUtils", text, "", 0, 0.0,
    )  # fmt: skip
    return Candidate(hit, score=score)


def test_for_a_question_asking_for_a_function_the_overloads_of_a_name_are_results_apart():
    """Java's overloads share a definition key with the windows of one long function: a question saying what code
    does is told the functions apart by their lines (a body goes on deeper than its signature), the best three
    a result each."""
    body = "        out.write(buffer, 0, n);"
    places = [
        _method(40, 52, "    /**\n     * Copies chars from a Reader to a Writer.", 0.9),  # the best overload
        _method(10, 24, "    /** Copies bytes from an InputStream to chars on a Writer. */\n    public static", 0.8),
        _method(53, 70, body, 0.7),  # a window of the best one, at a blank-line seam after its first
        _method(72, 80, "    @Deprecated\n    public static void copy(String input, Writer output)", 0.6),
        _method(25, 38, "    public static void copy(byte[] input, Writer output) {", 0.5),
        _method(82, 90, "    public static void copy(String input, OutputStream output) {", 0.4),  # a fourth
        _method(91, 99, "    public static void write(String data, Writer output) {", 0.3, name="write"),
    ]
    folded: list[tuple[int, int]] = []
    kept = merge_units(
        places, definition_units(places, True), lambda k, d: folded.append((k.hit.start_line, d.hit.start_line))
    )
    assert [c.hit.start_line for c in kept] == [40, 10, 72, 91]
    assert folded == [(40, 53), (40, 25), (40, 82)]  # its window, then the overloads past the best three
    together = merge_units(places, definition_units(places, False), lambda k, d: None)  # any other question
    assert [c.hit.start_line for c in together] == [40, 91]


# --- on a real index ------------------------------------------------------------------------------

_ERRORS_TS = """/**
 * Errors thrown by the client when a request fails.
 */
export class HTTPError extends Error {
  public response: Response;
  public request: Request;

  constructor(response: Response, request: Request) {
    const status = `${response.status} ${response.statusText}`;
    super(`Request failed with status code ${status}`);
    this.name = "HTTPError";
    this.response = response;
    this.request = request;
  }
}

export class TimeoutError extends Error {
  constructor(public request: Request) {
    super("Request timed out");
    this.name = "TimeoutError";
  }
}
"""

_README = """# ky-like client

## HTTPError

Thrown for responses with a status code outside the 2xx range. The error has a `response` property.

## TimeoutError

The error thrown when the request times out.

## Retry

Failed requests are retried with exponential backoff.
"""

_ERRORS_TEST = """import { HTTPError } from "../src/errors";

test("HTTPError carries the response", () => {
  const response = new Response("", { status: 500 });
  const error = new HTTPError(response, new Request("https://example.com"));
  expect(error.response.status).toBe(500);
  expect(error.name).toBe("HTTPError");
});
"""

_LEGACY_TS = """import { HTTPError } from "./errors";

/** The old factory, kept for callers of version 1. */
export function httpError(response: Response, request: Request): HTTPError {
  return new HTTPError(response, request);
}
"""

_RETRY_TS = (
    "export function computeDelay(attempt: number, base: number): number {\n"
    + "".join(
        f"  // step {i}: the delay grows with each failed attempt, capped by the limit\n"
        f"  const part{i} = Math.min(base * 2 ** attempt, {1000 + i});\n"
        for i in range(60)
    )
    + "  return base;\n}\n"
)

_BACKUP_TS = """export interface Backup {
  total: number;
  copied: number;
}

export function startBackup(total: number): Backup {
  return { total, copied: 0 };
}
"""

_BACKUP_PAGES_TS = """import { Backup } from "./backup";

export function pagesLeftToCopy(backup: Backup): number {
  const pagesLeft = backup.total - backup.copied;
  return pagesLeft;
}
"""


def _write(root: Path, files: dict[str, str]) -> None:
    """The files (path in `root`: text) written, their folders made."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


@pytest.fixture(scope="module")
def ranked_repo(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("ranking") / "client"
    _write(
        root,
        {
            "src/errors.ts": _ERRORS_TS,
            "README.md": _README,
            "test/errors.test.ts": _ERRORS_TEST,
            "src/retry.ts": _RETRY_TS,
            "src/legacy.ts": _LEGACY_TS,
            "src/backup.ts": _BACKUP_TS,
            "src/pages.ts": _BACKUP_PAGES_TS,
        },
    )
    store = SqliteStore(tmp_path_factory.mktemp("ranking-db") / "index.db")
    Indexer(store, embedder).index(root)
    yield Searcher(store, embedder), root
    store.close()


def _search(ranked_repo, query: str, k: int = 10):
    searcher, root = ranked_repo
    return searcher.search(SearchRequest(query, roots=(str(root),), k=k, record_history=False)).results


def test_the_class_a_user_names_outranks_the_readme_heading_and_the_test(ranked_repo):
    results = _search(ranked_repo, "HTTPError")
    assert (results[0].path, results[0].symbol_name) == ("src/errors.ts", "HTTPError")
    # `httpError` is named too, but not as typed: second, still in the tier of named definitions
    assert (results[1].symbol_name, results[0].score > results[1].score >= 0.9) == ("httpError", True)
    words = _search(ranked_repo, "error thrown when a response has a failing status code")
    assert words[0].path == "src/errors.ts"


def test_a_function_a_sentence_names_is_not_taken_for_the_one_it_describes(ranked_repo):
    """A doc comment names the other functions its function works with: sqlite's "Return the number of pages still
    to be backed up as of the most recent call to sqlite3_backup_step" put `sqlite3_backup_step` first. Named
    alone, that function comes first."""
    question = "Return the number of pages left to copy in a backup started by startBackup"
    assert _search(ranked_repo, question)[0].symbol_name == "pagesLeftToCopy"
    assert _search(ranked_repo, "startBackup")[0].symbol_name == "startBackup"


_COPY_UTILS_JAVA = """package org.example.io;

import java.io.*;

public class CopyUtils {

    /**
     * Copies bytes from an InputStream to an OutputStream.
     */
    public static int copy(InputStream input, OutputStream output) throws IOException {
        byte[] buffer = new byte[4096];
        int count = 0;
        int n;
        while ((n = input.read(buffer)) != -1) {
            output.write(buffer, 0, n);
            count += n;
        }
        return count;
    }

    /**
     * Copies and converts bytes from an InputStream to chars on a Writer, using the specified encoding.
     */
    public static void copy(InputStream input, Writer output, String encoding) throws IOException {
        InputStreamReader in = new InputStreamReader(input, encoding);
        copy(in, output);
    }

    /**
     * Copies chars from a Reader to a Writer.
     */
    public static int copy(Reader input, Writer output) throws IOException {
        char[] buffer = new char[4096];
        int count = 0;
        int n;
        while ((n = input.read(buffer)) != -1) {
            output.write(buffer, 0, n);
            count += n;
        }
        return count;
    }
}
"""


def test_a_c_functions_windows_starting_at_a_label_or_a_preprocessor_line_stay_one_result():
    def c_window(start: int, end: int, text: str, score: float) -> Candidate:
        hit = Hit(
            PlaceId(start), ChunkId(start), "s", "net/core/dev.c", "c", start, end, "function", "register_netdevice",
            "function", None, text, "", 0, 0.0,
        )  # fmt: skip
        return Candidate(hit, score=score)

    places = [
        c_window(120, 160, "err_uninit:\n\tif (dev->netdev_ops->ndo_uninit)", 0.9),
        c_window(10, 60, "/**\n * register_netdevice() - register a network device\n */\nint register_netdevice(", 0.8),
        c_window(62, 118, "#ifdef CONFIG_NET_POLL\n\tnetpoll_init(dev);\n#endif", 0.7),
    ]
    assert len(merge_units(places, definition_units(places, True), lambda k, d: None)) == 1


def test_the_overload_a_question_describes_is_a_result_of_its_own(tmp_path, embedder):
    root = tmp_path / "io"
    (root / "src").mkdir(parents=True)
    (root / "src/CopyUtils.java").write_text(_COPY_UTILS_JAVA)
    store = SqliteStore(tmp_path / "index.db")
    try:
        Indexer(store, embedder).index(root)
        searcher = Searcher(store, embedder)

        def copies(query: str) -> list[int]:
            results = searcher.search(SearchRequest(query, roots=(str(root),), k=10, record_history=False)).results
            return [r.start_line for r in results if r.symbol_name == "copy"]

        described = _COPY_UTILS_JAVA.split("\n").index("    /**", 20) + 1  # the second overload's doc comment
        asked = copies("Copies bytes from an InputStream to chars on a Writer, using the given character encoding")
        assert described in asked and len(asked) == 3
        assert len(copies("copy")) == 1  # a name: one result for the name, as before
        assert len(copies("byte copying between streams")) == 1  # a question about a part of the code
    finally:
        store.close()


_THIN_BLUEPRINT = '''from .sansio.blueprints import Blueprint as SansioBlueprint


class Blueprint(SansioBlueprint):
    """A blueprint that serves static files."""

    def send_static_file(self, filename):
        return filename
'''

_SANSIO_BLUEPRINT = '''class Blueprint:
    """Represents a blueprint, a collection of routes and other app-related functions that can be registered on a
    real application later."""

    def __init__(self, name, import_name):
        self.name = name
        self.import_name = import_name

''' + "\n".join(
    f'''    def {name}(self, {arg}):
        """{doc}"""
        self.{name}_calls.append({arg})
        return self.{name}_calls
'''
    for name, arg, doc in (
        ("register", "app", "Record this blueprint on the app."),
        ("add_url_rule", "rule", "Add a URL rule under the blueprint's prefix."),
        ("before_request", "f", "Run f before each request of the blueprint."),
        ("after_request", "f", "Run f after each request of the blueprint."),
        ("errorhandler", "code", "Handle an error code raised in the blueprint."),
        ("app_template_filter", "f", "A template filter for the whole app."),
    )
)

_SCHEMA = """export class ZodObject {
  shape: Record<string, unknown> = {};

  extend(more: Record<string, unknown>): ZodObject {
    return Object.assign(new ZodObject(), { shape: { ...this.shape, ...more } });
  }
}
"""


def test_of_the_definitions_a_name_gives_the_one_with_most_to_it_and_the_newest_come_first(tmp_path, embedder):
    """flask's `Blueprint` is a thin subclass in blueprints.py over the class in sansio/blueprints.py that holds its
    work, which a user asking for `Blueprint` means (fusion.EXTENT_WEIGHT); zod keeps its major versions side by side
    in `v3/` and `v4/`, and the newest is the one in use (evidence.SUPERSEDED_FACTOR)."""
    root = tmp_path / "repo"
    _write(
        root,
        {
            "flask/blueprints.py": _THIN_BLUEPRINT,
            "flask/sansio/blueprints.py": _SANSIO_BLUEPRINT,
            "zod/v3/types.ts": _SCHEMA,
            "zod/v4/types.ts": _SCHEMA,
        },
    )
    store = SqliteStore(tmp_path / "index.db")
    try:
        Indexer(store, embedder).index(root)
        searcher = Searcher(store, embedder)

        def first(query: str, mode: Mode) -> str:
            request = SearchRequest(query, roots=(str(root),), k=5, mode=mode, record_history=False)
            return searcher.search(request).results[0].path

        for mode in ("hybrid", "exact"):
            assert first("Blueprint", mode) == "flask/sansio/blueprints.py", mode
            assert first("ZodObject", mode) == "zod/v4/types.ts", mode
        # Not only by name: of two copies of the same code, a question in words finds the newest first.
        assert first("how an object schema's shape is extended", "hybrid") == "zod/v4/types.ts"
    finally:
        store.close()


def test_a_long_function_is_one_result_not_one_per_window(ranked_repo):
    results = _search(ranked_repo, "delay grows with each failed attempt", k=20)
    windows = [r for r in results if r.symbol_name == "computeDelay"]
    assert len(windows) == 1 and results[0].symbol_name == "computeDelay"


@pytest.mark.parametrize("query", ["HTTPError", "delay grows with each failed attempt", "request timed out", "errors"])
def test_the_first_n_results_do_not_depend_on_k(ranked_repo, searcher_on_mixed, query):
    for search in (lambda k: _search(ranked_repo, query, k), searcher_on_mixed(query)):
        many = [(r.path, r.start_line, r.score) for r in search(30)]
        for k in (1, 3, 5, 10):
            assert [(r.path, r.start_line, r.score) for r in search(k)] == many[:k], (query, k)


@pytest.fixture(scope="module")
def searcher_on_mixed(mixed_index, mixed_root, embedder, tmp_path_factory):
    import shutil

    db = tmp_path_factory.mktemp("ranking-mixed") / "index.db"
    shutil.copy(mixed_index[0], db)
    store = SqliteStore(db)
    searcher = Searcher(store, embedder)

    def for_query(query: str):
        return lambda k: (
            searcher.search(SearchRequest(query, roots=(str(mixed_root),), k=k, record_history=False)).results
        )

    yield for_query
    store.close()


@pytest.mark.parametrize("query", ["delay grows with each failed attempt", "request timed out", "matrix"])
def test_a_larger_fetch_only_adds_results_after_those_of_the_first(searcher_on_mixed, monkeypatch, query):
    # A first fetch of 4 candidates per retriever leaves every k short, so each search fetches 16, 64, ...
    # candidates: their rankings differ, yet the first N results of a longer list are still those of N.
    monkeypatch.setattr(pipeline, "FETCH", 4)
    search = searcher_on_mixed(query)
    many = [(r.path, r.start_line, r.score) for r in search(30)]
    assert len(many) == len({(path, start) for path, start, _ in many}) > 10
    for k in (1, 3, 5, 10):
        assert [(r.path, r.start_line, r.score) for r in search(k)] == many[:k], (query, k)
    assert all(a[2] >= b[2] for a, b in zip(many, many[1:], strict=False)), "scores read best first"
