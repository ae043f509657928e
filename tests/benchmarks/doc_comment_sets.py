"""Build held-out doc-comment retrieval sets in Go, TypeScript, Java, Rust and C (issue 30).

    .venv/bin/python tests/benchmarks/doc_comment_sets.py --out /tmp/docsets

reads the packages of tests/benchmarks/doc_comment_packages.json, downloads each one once into
~/.cache/quarry-docsets/ (Debian binary packages with `apt-get download`, Debian source packages with
`apt-get source --download-only` through a private deb-src list kept in that cache, npm tarballs with
`npm pack`), and writes for every language OUT/<lang>/corpus/... and OUT/<lang>/queries.jsonl in the
format of ../shared/eval/make_corpus.py, so that

    python3 ../shared/eval/run_eval.py /tmp/docsets/go --quarry .venv/bin/quarry --mode hybrid

scores it. Each query is the first sentence of a public function's or method's doc comment; its
answer is that function's line range in a copy of the file from which the doc comments of functions
have been removed. Removal deletes the comment's lines outright (as make_corpus.py deletes
docstring lines); every other line is kept byte for byte, so a line of the copy is the same line of
the original shifted up by the number of deleted comment lines above it. The answer's line numbers
are computed through that shift and checked against the copy's text.

Filters, as make_corpus.py: a first sentence of 4 to 40 words that is not a TODO, a deprecation, a
cross-reference ("see ...", "same as ...") or the name restated; the function 4 to 80 lines long
(metrics.MAX_SPAN); no test, benchmark, example or generated files. Go's convention of opening a
doc comment with the function's name ("Len returns ...") is undone ("Returns ..."): the name would
otherwise hand the answer to the keyword index, and the identifier queries already measure that.
Identifier queries are the names (8 characters or more) defined once in a language's corpus, as in
make_corpus.py. Sampling uses a fixed seed, so a rebuild gives the same sets.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import tree_sitter_c
import tree_sitter_go
import tree_sitter_java
import tree_sitter_rust
import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "doc_comment_packages.json"
CACHE = Path.home() / ".cache" / "quarry-docsets"
MAX_SPAN = 80  # ../shared/eval/metrics.py: a longer hit does not count
MAX_FILE_BYTES = 150_000
GRAMMARS: dict[str, Callable[[], object]] = {
    "go": tree_sitter_go.language,
    "rust": tree_sitter_rust.language,
    "java": tree_sitter_java.language,
    "typescript": tree_sitter_typescript.language_typescript,
    "c": tree_sitter_c.language,
}
TEST_PARTS = {"test", "tests", "testing", "testdata", "__tests__", "spec", "bench", "benches", "examples", "example"}
GENERATED = re.compile(r"code generated|do not edit|@generated|automatically generated|auto-generated", re.I)
HTML_TAG = (
    r"</?(p|code|b|i|em|strong|tt|pre|ul|ol|li|br|a|blockquote|h\d|table|tr|td|th|dl|dt|dd|sup|sub|span|div)\b[^>]*>"
)
DEPRECATED = re.compile(r"@deprecated|#\[deprecated|^\W*Deprecated:", re.I | re.M)
REJECT_START = ("see ", "deprecated", "alias", "same as", "like ", "for internal", "internal", "todo", "fixme")


@dataclass
class Function:
    name: str  # bare name
    qual: str  # Type.name where it has one
    public: bool
    start: int  # 0-based rows of the definition, attributes/annotations/export included
    end: int
    doc_rows: tuple[int, int] | None  # 0-based first and last row of its doc comment
    doc: str


# ---------------------------------------------------------------- fetching


def _run(cmd: list[str], cwd: Path) -> None:
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def _apt_source_options() -> list[str]:
    apt = CACHE / "apt"
    lists = apt / "lists"
    if not (apt / "sources.list").exists():
        (lists / "partial").mkdir(parents=True, exist_ok=True)
        (apt / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
        (apt / "sources.list").write_text(
            "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
            "http://deb.debian.org/debian bookworm main\n"
        )
    opts = [
        f"-oDir::Etc::SourceList={apt / 'sources.list'}",
        "-oDir::Etc::SourceParts=/nonexistent",
        f"-oDir::State::Lists={lists}",
        f"-oDir::Cache={apt / 'cache'}",
    ]
    if not list(lists.glob("*Sources*")):
        _run(["apt-get", *opts, "update"], apt)
    return opts


def fetch(pkg: dict) -> Path:
    """Download and unpack one package once; return the folder its files are under."""
    name, version, registry = pkg["name"], pkg["version"], pkg["registry"]
    dest = CACHE / "extracted" / f"{registry}-{name.replace('/', '+')}-{version}"
    if dest.exists():
        return dest
    tmp = dest.with_name(dest.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if registry == "debian":
        debs = CACHE / "debs"
        debs.mkdir(parents=True, exist_ok=True)
        found = list(debs.glob(f"{name}_{version.split(':')[-1]}_*.deb"))
        if not found:
            _run(["apt-get", "download", f"{name}={version}"], debs)
            found = list(debs.glob(f"{name}_{version.split(':')[-1]}_*.deb"))
        _run(["dpkg", "-x", str(found[0]), str(tmp)], tmp)
    elif registry == "debian-source":
        src = CACHE / "src"
        src.mkdir(parents=True, exist_ok=True)
        upstream = version.split(":")[-1].rsplit("-", 1)[0]
        pattern = f"{name}_{upstream}.orig.tar.*"
        if not list(src.glob(pattern)):
            _run(["apt-get", *_apt_source_options(), "source", "--download-only", f"{name}={version}"], src)
        with tarfile.open(sorted(src.glob(pattern))[0]) as tf:
            tf.extractall(tmp, filter="data")
    elif registry == "npm":
        npm = CACHE / "npm"
        npm.mkdir(parents=True, exist_ok=True)
        tgz = npm / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
        if not tgz.exists():
            _run(["npm", "pack", f"{name}@{version}", "--silent"], npm)
        with tarfile.open(tgz) as tf:
            tf.extractall(tmp, filter="data")
    else:
        sys.exit(f"unknown registry {registry!r} for {name}")
    tmp.rename(dest)
    return dest


def package_files(pkg: dict, root: Path, seed: int) -> list[tuple[Path, str]]:
    """(file, corpus path) for the package's chosen source files, tests and generated files left out."""
    base = root / pkg["root"]
    files: set[Path] = set()
    for pattern in pkg["include"]:
        files.update(Path(p) for p in glob.glob(str(base / pattern), recursive=True))
    chosen = []
    for f in sorted(files):
        rel = f.relative_to(base)
        low = rel.as_posix().lower()
        if not f.is_file() or TEST_PARTS & {p.lower() for p in rel.parts[:-1]}:
            continue
        if re.search(r"(_test\.go|\.test\.ts|\.spec\.ts|\.d\.ts|test\.java|tests?\.rs)$", low) or "/test" in "/" + low:
            continue
        if f.stat().st_size > MAX_FILE_BYTES or GENERATED.search(f.read_text(errors="replace")[:2000]):
            continue
        chosen.append((f, f"{pkg['prefix']}/{rel.as_posix()}"))
    if len(chosen) > pkg.get("max_files", 10**9):
        chosen = sorted(random.Random(seed).sample(chosen, pkg["max_files"]), key=lambda x: x[1])
    return chosen


# ---------------------------------------------------------------- parsing


def _rows(node: Node) -> tuple[int, int]:
    """First and last row a node's text occupies (a line comment's node may end at the next row's column 0)."""
    end_row, end_col = node.end_point
    return node.start_point[0], end_row - 1 if end_col == 0 and end_row > node.start_point[0] else end_row


def _alone_on_lines(node: Node, lines: list[bytes]) -> bool:
    first, last = _rows(node)
    before = lines[first][: node.start_point[1]]
    after = lines[last][node.end_point[1] :] if node.end_point[0] == last else b""
    return not before.strip() and not after.strip()


def _is_doc(lang: str, text: str) -> bool:
    if lang == "go":
        return text.startswith("//") and not text.startswith(("//go:", "//nolint", "// +build"))
    if lang == "rust":
        return (text.startswith("///") and not text.startswith("////")) or (text.startswith("/**") and text != "/**/")
    if lang in ("java", "typescript"):
        return text.startswith("/**") and text != "/**/"
    return text.startswith(("/*", "//"))


def doc_comment(lang: str, anchor: Node, lines: list[bytes]) -> tuple[tuple[int, int] | None, str]:
    """The doc comment directly above anchor (no blank line between): its rows and raw text."""
    skip = {"attribute_item", "decorator"}
    node = anchor.prev_sibling
    top = anchor.start_point[0]
    while node is not None and node.type in skip:
        top = node.start_point[0]
        node = node.prev_sibling
    comments: list[Node] = []
    line_style = lang in ("go", "rust") or lang == "c"
    while node is not None and "comment" in node.type:
        text = node.text.decode("utf-8", "replace") if node.text else ""
        if _rows(node)[1] != top - 1 or not _is_doc(lang, text) or not _alone_on_lines(node, lines):
            break
        comments.insert(0, node)
        top = node.start_point[0]
        if not (line_style and text.startswith("//")):
            break  # a block comment is the whole doc comment
        node = node.prev_sibling
    if not comments:
        return None, ""
    if lang == "c" and len(comments) > 1 and not all(c.text and c.text.startswith(b"//") for c in comments):
        comments = comments[-1:]
    text = "\n".join(c.text.decode("utf-8", "replace").rstrip("\r\n") for c in comments if c.text)
    return (_rows(comments[0])[0], _rows(comments[-1])[1]), text


def _name(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _c_name(decl: Node | None) -> str:
    while decl is not None and decl.type != "identifier":
        if decl.type == "function_declarator" or "declarator" in decl.type:
            decl = decl.child_by_field_name("declarator")
        else:
            return ""
    return _name(decl)


def functions(lang: str, root: Node, path: str) -> Iterator[tuple[Node, Node, str, str, bool]]:
    """(definition, anchor, name, qualified name, public) for each function or method definition.

    The anchor is the node a doc comment sits directly above (an export statement around a
    TypeScript function, say)."""

    def walk(node: Node, owner: str, exported: bool) -> Iterator[tuple[Node, Node, str, str, bool]]:
        for child in node.named_children:
            t = child.type
            if lang == "go" and t in ("function_declaration", "method_declaration"):
                name = _name(child.child_by_field_name("name"))
                recv = child.child_by_field_name("receiver")
                owner_name = ""
                if recv is not None:
                    m = re.search(r"\*?\s*([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*\)\s*$", _name(recv))
                    owner_name = m.group(1) if m else ""
                qual = f"{owner_name}.{name}" if owner_name else name
                yield child, child, name, qual, name[:1].isupper()
            elif lang == "rust":
                if t == "function_item":
                    name = _name(child.child_by_field_name("name"))
                    vis = any(c.type == "visibility_modifier" for c in child.children)
                    yield child, child, name, f"{owner}.{name}" if owner else name, vis or exported
                elif t == "impl_item":
                    trait = child.child_by_field_name("trait") is not None
                    body = child.child_by_field_name("body")
                    tname = re.sub(r"<.*", "", _name(child.child_by_field_name("type")))
                    if body is not None:
                        yield from walk(body, tname, trait)
                elif t == "trait_item":
                    body = child.child_by_field_name("body")
                    pub = any(c.type == "visibility_modifier" for c in child.children)
                    if body is not None:
                        yield from walk(body, _name(child.child_by_field_name("name")), pub)
                elif t == "mod_item" and _name(child.child_by_field_name("name")) not in ("tests", "test", "bench"):
                    body = child.child_by_field_name("body")
                    if body is not None:
                        yield from walk(body, owner, False)
            elif lang == "java":
                if t in ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration"):
                    body = child.child_by_field_name("body")
                    name = _name(child.child_by_field_name("name"))
                    if body is not None:
                        yield from walk(body, f"{owner}.{name}" if owner else name, t == "interface_declaration")
                elif t == "enum_body_declarations":
                    yield from walk(child, owner, exported)
                elif t in ("method_declaration", "constructor_declaration") and child.child_by_field_name("body"):
                    mods = next((c for c in child.children if c.type == "modifiers"), None)
                    words = _name(mods).split()
                    public = "public" in words or (exported and "private" not in words)
                    name = _name(child.child_by_field_name("name"))
                    yield child, child, name, f"{owner}.{name}", public
            elif lang == "typescript":
                target = child.child_by_field_name("declaration") if t == "export_statement" else child
                if target is None:
                    continue
                is_export = t == "export_statement"
                tt = target.type
                if tt in ("function_declaration", "generator_function_declaration"):
                    name = _name(target.child_by_field_name("name"))
                    yield target, child, name, name, is_export
                elif tt in ("lexical_declaration",):
                    for d in target.named_children:
                        value = d.child_by_field_name("value")
                        if (
                            d.type == "variable_declarator"
                            and value is not None
                            and value.type
                            in (
                                "arrow_function",
                                "function_expression",
                            )
                        ):
                            name = _name(d.child_by_field_name("name"))
                            yield target, child, name, name, is_export
                elif tt in ("class_declaration", "abstract_class_declaration"):
                    body = target.child_by_field_name("body")
                    if body is not None:
                        yield from walk(body, _name(target.child_by_field_name("name")), is_export)
                elif tt == "method_definition" and target.child_by_field_name("body") is not None:
                    name = _name(target.child_by_field_name("name"))
                    access = next((_name(c) for c in target.children if c.type == "accessibility_modifier"), "")
                    public = exported and access not in ("private", "protected") and not name.startswith(("_", "#"))
                    yield target, child, name, f"{owner}.{name}", public
                elif tt in ("internal_module", "module"):
                    body = target.child_by_field_name("body")
                    if body is not None:
                        yield from walk(body, owner, exported)
            elif lang == "c":
                if t == "function_definition":
                    name = _c_name(child.child_by_field_name("declarator"))
                    static = any(c.type == "storage_class_specifier" and _name(c) == "static" for c in child.children)
                    yield child, child, name, name, path.endswith(".h") or not static
                elif t in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "linkage_specification"):
                    yield from walk(
                        child if t != "linkage_specification" else child.child_by_field_name("body") or child,
                        owner,
                        exported,
                    )

    yield from walk(root, "", False)


def clean(lang: str, raw: str) -> str:
    """A doc comment's prose: delimiters, block tags, inline markup and markdown taken away."""
    out = []
    for line in raw.splitlines():
        s = line.strip()
        s = re.sub(r"^(///?|//!|/\*\*?!?|\*+/|\*+(?!/))", "", s).strip()
        s = re.sub(r"\*+/$", "", s).strip()
        if re.match(r"^[@\\][a-zA-Z]+", s) and not re.match(r"^[@\\]brief\b", s):
            break  # block tags (@param, @return, @warning, \\see ...) end the prose
        if lang == "rust" and s.startswith(("# ", "```")):
            break
        out.append(s)
    text = re.sub(r"\*{3,}", " ", "\n".join(out))  # banner lines of asterisks
    text = re.sub(r"[@\\]brief\s*", "", text)
    text = re.sub(
        r"\{@(?:link|linkplain|code|literal|value)\s+([^}\s]+)(?:\s+([^}]*))?\}",
        lambda m: m.group(2) or m.group(1),
        text,
    )
    text = re.sub(r"\{@inheritDoc\}", "inheritDoc", text)
    text = re.sub(HTML_TAG, "", text)
    text = re.sub(r"\\([\[\]*_`])", r"\1", text).replace("**", "")
    text = re.sub(r"\[`?([^\]`]+)`?\]\((?:[^()]|\([^()]*\))*\)", r"\1", text)  # [text](url)
    text = re.sub(r"\[`?([^\]`]+)`?\](\[[^\]]*\])?", r"\1", text)  # [`Name`] and [name][ref]
    text = text.replace("`", "")
    text = re.sub(r"(\w)#(\w)", r"\1.\2", text)
    if lang in ("java", "typescript"):
        text = re.sub(r"(?<![\w&])#(?=[A-Za-z_])", "", text)  # {@link #member}
    if lang == "rust":
        text = re.sub(r"(?<![\w*])\*(\S[^*\n]*?)\*(?![\w*])", r"\1", text)  # *emphasis*
    text = re.sub(r"@[\w-]+/[\w-]+\.(?=\w)", "", text)  # {@link @scope/package.Name}
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def first_sentence(lang: str, raw: str, name: str) -> str | None:
    text = clean(lang, raw).strip()
    if not text:
        return None
    para = " ".join(re.split(r"\n\s*\n", text)[0].split())
    m = re.match(r"(.+?[.!?])(\s|$)", para)
    s = m.group(1) if m else para
    if lang == "go":
        words = s.split(None, 1)
        if len(words) == 2 and words[0].strip("*()") == name:
            s = words[1][:1].upper() + words[1][1:]
    words = s.split()
    if not (4 <= len(words) <= 40):
        return None
    low = s.lower()
    if low.startswith(REJECT_START) or re.search(r"\b(todo|fixme|xxx|inheritdoc)\b", low):
        return None
    parts = {p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)}
    rest = [
        w for w in re.findall(r"[a-z0-9]+", low) if w not in parts and w not in {"a", "an", "the", "this", "of", "is"}
    ]
    if len(rest) < 3:
        return None  # the name restated ("Gets the value.")
    return s


# ---------------------------------------------------------------- building


def build_language(lang: str, pkgs: list[dict], out: Path, seed: int, max_queries: int) -> tuple[int, int, int, int]:
    parser = Parser(Language(GRAMMARS[lang]()))
    dest = out / lang
    shutil.rmtree(dest, ignore_errors=True)
    corpus = dest / "corpus"
    corpus.mkdir(parents=True)
    nl: list[dict] = []
    names: dict[str, list[dict]] = {}
    n_files = 0
    for pkg in pkgs:
        root = fetch(pkg)
        for src, rel in package_files(pkg, root, seed):
            data = src.read_text(encoding="utf-8", errors="replace").encode()
            lines = data.split(b"\n")
            tree = parser.parse(data)
            found: list[Function] = []
            for node, anchor, name, qual, public in functions(lang, tree.root_node, rel):
                if not name:
                    continue
                rows, raw = doc_comment(lang, anchor, lines)
                start = min(anchor.start_point[0], node.start_point[0])
                found.append(Function(name, qual, public, start, _rows(node)[1], rows, raw))
            drop = sorted({r for f in found if f.doc_rows for r in range(f.doc_rows[0], f.doc_rows[1] + 1)})
            dropped = set(drop)
            kept = [line for i, line in enumerate(lines) if i not in dropped]
            target = corpus / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"\n".join(kept))
            n_files += 1

            for f in found:
                # 1-based lines of the copy: each row moves up by the deleted rows above it
                start = f.start - bisect_left(drop, f.start) + 1
                end = f.end - bisect_left(drop, f.end) + 1
                assert kept[start - 1] == lines[f.start], (rel, f.qual)
                if end - start + 1 > MAX_SPAN:
                    continue
                entry = {"path": rel, "start_line": start, "end_line": end, "name": f.qual}
                names.setdefault(f.name, []).append(entry)
                if not f.public or f.name.startswith("_") or end - start < 3 or not f.doc_rows:
                    continue
                if DEPRECATED.search(f.doc) or DEPRECATED.search(b"\n".join(lines[f.start : f.start + 3]).decode()):
                    continue
                sentence = first_sentence(lang, f.doc, f.name)
                if sentence:
                    nl.append({"query": sentence, **entry, "kind": "nl"})
    seen: set[str] = set()
    uniq = []
    for q in nl:
        if q["query"].lower() not in seen:
            seen.add(q["query"].lower())
            uniq.append(q)
    pool = len(uniq)
    rng = random.Random(seed)
    rng.shuffle(uniq)
    uniq = uniq[:max_queries]
    ident = [
        {"query": short, **defs[0], "name": short, "kind": "identifier"}
        for short, defs in names.items()
        if len(defs) == 1 and len(short) >= 8 and not short.startswith("_")
    ]
    rng.shuffle(ident)
    ident = ident[: max(20, max_queries // 4)]
    with open(dest / "queries.jsonl", "w") as fh:
        for q in uniq + ident:
            fh.write(json.dumps(q) + "\n")
    return n_files, pool, len(uniq), len(ident)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--languages", default="go,typescript,java,rust,c")
    a = ap.parse_args(argv)
    manifest = json.loads(MANIFEST.read_text())
    summary: dict[str, dict[str, int]] = {}
    for lang in a.languages.split(","):
        pkgs = [p for p in manifest["packages"] if p["language"] == lang]
        files, pool, n_nl, n_id = build_language(lang, pkgs, a.out, manifest["seed"], manifest["max_queries"])
        print(f"{lang}: {files} files, {n_nl} nl queries (of {pool}), {n_id} identifier queries -> {a.out / lang}")
        summary[lang] = {"files": files, "nl": n_nl, "nl_pool": pool, "identifier": n_id}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
