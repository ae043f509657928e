"""The preview's colours (issue 14, item 3): an excerpt is lexed after the lines before it, so one that starts
inside a docstring is not coloured as code (the colours used to invert)."""

from __future__ import annotations

from pygments.token import Keyword, String

from desktop_app.search.term_spans import term_spans
from desktop_app.ui.highlighting import lex_runs

LEAD = 'def outer():\n    """Turn the first page of a long docstring.\n\n'
EXCERPT = '    def looks_like_code(self):\n        return 1\n    """\n    value = 2\n'


def test_an_excerpt_starting_inside_a_docstring_is_coloured_as_the_docstring():
    runs = lex_runs(EXCERPT, "python", LEAD)
    assert "".join(value for _, value in runs) == EXCERPT  # every character, none of the lead's
    assert runs[0][0] in String and runs[0][1].startswith("    def looks_like_code")
    after = next(token for token, value in runs if value.strip() == "value")
    assert after not in String  # the docstring ends where the file ends it, and code follows
    alone = lex_runs(EXCERPT, "python")  # what the preview did before: code from the first line
    assert next(token for token, value in alone if value.strip() == "def") in Keyword


def test_a_ranked_searchs_words_are_found_in_the_hit_for_the_preview():
    text = "def fetch_with_retry(url):\n    # exponential backoff, Retry after a delay\n    return url"
    spans = term_spans("retry with exponential backoff", text, 21)
    found = {(line, text.split("\n")[line - 21][start:end]) for line, start, end in spans}
    assert found == {(21, "retry"), (22, "exponential"), (22, "backoff"), (22, "Retry")}  # "with" is a stopword


def test_words_are_marked_where_a_word_or_an_identifiers_part_starts():
    text = "word = email.quoprimime.header_decode(encoded_string)  # an unencoded word"
    spans = term_spans("decode a MIME encoded-word header", text, 1)
    assert [text[start:end] for _, start, end in spans] == ["word", "header", "decode", "encoded", "word"]
