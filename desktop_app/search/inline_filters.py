"""Filters typed into the query itself, the same in the window, the command line and the agent tools:

    retry backoff lang:go path:internal/ -path:vendor/ type:function

`lang:L` keeps one language (several lang: keep any of them), `path:GLOB` keeps paths matching a
gitignore-style pattern (several: any of them), `-path:GLOB` drops paths matching it, `type:T` keeps
definitions of one kind (function, method, class...). A value with spaces goes in double quotes. The words
left are the query. Text mode reads its query as typed, so it takes none of these.
"""

from __future__ import annotations

import dataclasses
import re

from .request import SearchError, SearchRequest

_FILTER = re.compile(r'(?<!\S)(-?)(lang|path|type):("[^"]*"|\S+)')


def with_inline_filters(request: SearchRequest) -> SearchRequest:
    """`request` with the filters written in its query moved into its filters (ranked modes only)."""
    if request.mode == "text" or ":" not in request.query:
        return request
    languages: list[str] = []
    globs: list[str] = []
    symbol_types: list[str] = []
    for negated, key, raw in _FILTER.findall(request.query):
        value = raw[1:-1] if raw.startswith('"') else raw
        if negated and key != "path":
            raise SearchError(f"-{key}: cannot leave anything out; only paths can (-path:GLOB), keep with {key}:")
        if key == "lang":
            languages.append(value.lower())
        elif key == "path":
            globs.append(f"!{value}" if negated else value)
        else:
            symbol_types.append(value.lower())
    if not (languages or globs or symbol_types):
        return request
    query = " ".join(_FILTER.sub(" ", request.query).split())
    f = request.filters
    filters = dataclasses.replace(
        f,
        languages=f.languages + tuple(languages),
        globs=f.globs + tuple(globs),
        symbol_types=f.symbol_types + tuple(symbol_types),
    )
    return dataclasses.replace(request, query=query, filters=filters)
