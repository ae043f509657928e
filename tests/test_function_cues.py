"""What a question saying what code does shares with a function: its declaration's words, its name's hidden words."""

from __future__ import annotations

from dataclasses import replace

from desktop_app.identifiers import last_name
from desktop_app.search.function_cues import (
    DECLARATION_WORDS,
    declaration_fit,
    declaration_words,
    hidden_word_fit,
    question_words,
)
from desktop_app.search.query import parse
from desktop_app.store.rows import ChunkId, Hit, PlaceId

_JAVA = """/**
 * Copies chars from a {@code Reader} to a {@code Writer}; see {@link #copy(InputStream, OutputStream)}.
 */
@Deprecated
public static int copy(final Reader input, final Writer output) throws IOException {
    char[] buffer = new char[4096];
    return copyLarge(input, output, buffer);
}
"""


def _hit(text: str, name: str | None, chunk_type: str = "function") -> Hit:
    return Hit(
        PlaceId(1), ChunkId(1), "s", "a/b.java", "java", 1, 9, chunk_type, name, "method", None, text, "", 0, 0.0
    )


def test_a_declaration_runs_from_the_chunks_start_to_the_body_opening_after_the_name():
    # The leading comment's braces and the name in its link come before the declaration's own opening.
    words = declaration_words(_JAVA, "copy")
    assert {"reader", "writer", "input", "output", "deprecat", "copy", "int", "exception"} <= words
    assert "buffer" not in words and "copylarg" not in words  # the body's words are not the declaration's
    go = declaration_words("func (t *BTree) Clear() {\n\tt.root = nil\n}", "Clear")
    assert {"tre", "clear"} <= go and "root" not in go  # a method's receiver names its type
    python = declaration_words(
        "def read_lines(self, path: str, encoding: str) -> list[str]:\n    return []", "read_lines"
    )
    assert {"read", "lin", "path", "encod", "list"} <= python and "return" not in python
    assert declaration_words("int sqlite3_str_value(sqlite3_str *p);\n", "sqlite3_str_value") >= {"str", "valu"}
    # A later window of a long function, or a text that does not declare the name, holds no declaration.
    assert declaration_words("    output.write(buffer, 0, n);\n    count += n;\n}", "copy") == frozenset()


def test_a_qualified_name_ends_with_the_functions_own():
    assert [last_name(n) for n in ("Tree.Clear", "absl::StrCat", "ops->read", "plain")] == [
        "Clear",
        "StrCat",
        "read",
        "plain",
    ]


def test_a_declaration_fits_what_the_question_names_after_its_verb():
    question = parse("Copies chars from a Reader to a Writer.")
    assert question_words(question) == {"char", "reader", "writer"}  # the verb and the stop words are not asked for
    assert declaration_fit(question_words(question), _hit(_JAVA, "CopyUtils.copy")) == 1.0
    other = _JAVA[_JAVA.index("public") :].replace("final Reader input", "final InputStream input")  # no comment
    assert declaration_fit(question_words(question), _hit(other, "copy")) == 1 / DECLARATION_WORDS
    assert declaration_fit(question_words(question), _hit(_JAVA, "copy", "type")) == 0.0  # functions only
    assert declaration_fit(question_words(question), _hit(_JAVA, None)) == 0.0
    assert declaration_fit(frozenset(), _hit(_JAVA, "copy")) == 0.0


def test_a_name_holding_a_word_of_the_question_abbreviated_or_run_together_fits_it():
    assert hidden_word_fit("glm_max", parse("Finds the maximum of two values.")) == 1.0
    assert hidden_word_fit("glm_make_deg", parse("convert radians to degree")) == 1.0
    assert hidden_word_fit("Buffer.getLen", parse("Returns the length of the buffer.")) == 1.0
    assert hidden_word_fit("HTTPResponse.isclosed", parse("True if the connection is closed.")) == 1.0
    assert hidden_word_fit("astring", parse("Asserts something is a string.")) == 1.0
    # A word the question spells out, or one of its inflections, is the keyword index's to match.
    assert hidden_word_fit("glm_max", parse("find the max of two values")) == 0.0
    assert hidden_word_fit("removeAll", parse("Removes all the entries.")) == 0.0
    assert hidden_word_fit("getHeaders", parse("Returns the list of headers.")) == 0.0
    # A word and its derivative are two words: `read` does not abbreviate "reader".
    assert hidden_word_fit("IOUtils.read", parse("Gets the contents of a Reader as a String.")) == 0.0
    # Too short to abbreviate or to be found run into a name, or longer than the question's word: no fit.
    assert hidden_word_fit("is_in", parse("Checks membership in the index.")) == 0.0
    assert hidden_word_fit("remap", parse("Sets the map.")) == 0.0  # "map" is too short to be seen run in
    assert hidden_word_fit("address", parse("add two numbers")) == 0.0
    assert hidden_word_fit(None, parse("Finds the maximum of two values.")) == 0.0


def test_a_declaration_is_read_once_per_text_and_name():
    declaration_words.cache_clear()
    hit = _hit(_JAVA, "copy")
    words = question_words(parse("Copies chars from a Reader to a Writer."))
    for _ in range(3):
        declaration_fit(words, replace(hit))
    assert declaration_words.cache_info().misses == 1
