"""The training corpus (issue 30): the real fetch path over one small Debian package, and the rules that keep
excluded projects, vendored and generated code, fixtures and duplicates out of it."""

from __future__ import annotations

import hashlib
import json
import shutil
import sysconfig
from pathlib import Path

import pytest

from desktop_app.training import corpus
from desktop_app.training.exclusions import ExclusionList
from desktop_app.training.licences import debian_licences, is_permissive
from desktop_app.training.registries import RegistryError, resolve
from desktop_app.training.selection import select_files
from desktop_app.training.texts import source_files

EXCLUSIONS = """\
# name<TAB>upstream
abseil-cpp\thttps://github.com/abseil/abseil-cpp.git
click\thttps://github.com/pallets/click.git
cobra\thttps://github.com/spf13/cobra.git
express\thttps://github.com/expressjs/express.git
fmtlib\thttps://github.com/fmtlib/fmt.git
libuv\thttps://github.com/libuv/libuv.git
nlohmann-json\thttps://github.com/nlohmann/json.git
requests\thttps://github.com/psf/requests.git
ripgrep\thttps://github.com/BurntSushi/ripgrep.git
tokio\thttps://github.com/tokio-rs/tokio.git
zig\thttps://github.com/ziglang/zig.git
cpython-stdlib\thttps://github.com/python/cpython.git (Lib/)
"""
# node-uuid carries @types/uuid, DefinitelyTyped's typings for it, as an embedded copy of another upstream:
# listing that upstream makes it a vendored copy of an excluded project.
DEFINITELY_TYPED = "definitelytyped\thttps://github.com/DefinitelyTyped/DefinitelyTyped.git\n"
CODE = b"def greet(name):\n    return f'hello {name}'\n\n\ndef part(a, b):\n    return a + b\n"


def _exclusions(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "training-exclusions.txt"
    path.write_text(EXCLUSIONS + extra, encoding="utf-8")
    return path


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_fetch_builds_the_corpus_from_a_real_debian_package(tmp_path):
    if not (shutil.which("apt-get") and shutil.which("apt-cache")):
        pytest.skip("apt-get is not on this machine: the Debian fetch path needs it")
    cache = tmp_path / "cache"
    try:
        resolve("debian", "node-uuid", None, cache / "archives")
    except RegistryError as error:
        pytest.skip(f"apt cannot give node-uuid here ({error}); run apt-get update first")
    exclusions = _exclusions(tmp_path, DEFINITELY_TYPED)
    names = tmp_path / "names.txt"
    names.write_text("# Rule: the test's.\n\n[javascript]\ndebian node-uuid\ndebian node-express\n", encoding="utf-8")
    manifest = tmp_path / "manifest.json"
    common = ["--cache", str(cache), "--manifest", str(manifest), "--exclusions", str(exclusions)]

    assert corpus.main(["refresh", "--names", str(names), *common]) == 0
    pinned = json.loads(manifest.read_text(encoding="utf-8"))
    assert pinned["rule"] == "Rule: the test's."
    (uuid,) = pinned["packages"]
    assert uuid["name"] == "node-uuid" and uuid["licence"] == "Expat" and uuid["languages"] == ["javascript"]
    assert [r["name"] for r in pinned["refused"]] == ["node-express"]
    assert "express" in pinned["refused"][0]["reason"]

    # A manifest entry naming an excluded project is refused by fetch too, before anything is downloaded.
    pinned["packages"].append({**uuid, "name": "node-express", "version": "0", "sha256": "0" * 64, "archive": "x.deb"})
    manifest.write_text(json.dumps(pinned), encoding="utf-8")
    assert corpus.main(["fetch", *common]) == 0

    report = json.loads((cache / "report.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in report["refused"]] == ["node-express"] and report["failed"] == []
    index = _read_jsonl(cache / "index.jsonl")
    dropped = {d["rel_path"]: d["reason"] for d in _read_jsonl(cache / "dropped.jsonl")}
    kept = {entry["rel_path"]: entry for entry in index}
    assert len(index) == report["languages"]["javascript"]["files"] > 10
    for entry in index:
        data = (cache / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["bytes"]
        assert entry["package"] == "node-uuid" and entry["version"] == uuid["version"]
        assert entry["language"] == "javascript"  # .js, .mjs and .cjs alike, by Quarry's own mapping
    assert "uuid/wrapper.mjs" in kept
    # The training steps read the index through source_files, each file with its package.
    sources = list(source_files(cache / "index.jsonl"))
    assert sources and {(f.package, f.language) for f in sources} == {("node-uuid", "javascript")}
    # Deduplicated: each content once, the copy recorded as a duplicate of the file kept.
    assert len({entry["sha256"] for entry in index}) == len(index)
    assert "uuid/dist/esm-browser/index.js" in kept and "uuid/dist/esm-node/index.js" not in kept
    assert (
        dropped["uuid/dist/esm-node/index.js"] == "duplicate of files/debian/node-uuid/uuid/dist/esm-browser/index.js"
    )
    # The vendored copy of an excluded project is gone, and the reason says whose copy it was.
    assert not [path for path in kept if path.startswith("@types/")]
    assert dropped["@types/uuid/index.d.ts"] == "excluded: a copy of definitelytyped"
    assert dropped["uuid/dist/umd/uuid.min.js"] == "minified or data"


def test_exclusions_match_packages_of_an_excluded_project_by_name_source_and_alias(tmp_path):
    exclusions = ExclusionList.load(_exclusions(tmp_path))
    for name in ("golang-github-spf13-cobra-dev", "python3-requests", "node-express", "libuv1-dev", "libabsl-dev"):
        assert corpus.refusal("debian", name, "", exclusions) is not None, name
    for name in ("librust-tokio-util-dev", "librust-globset-dev", "libfmt-dev", "nlohmann-json3-dev"):
        assert corpus.refusal("debian", name, "", exclusions) is not None, name
    assert corpus.refusal("debian", "ruby-click-helpers", "", exclusions) is not None  # conservative
    assert corpus.refusal("debian", "python3-foo", "click", exclusions) is not None  # by its source package
    assert corpus.refusal("pypi", "asyncio", "", exclusions) is not None  # a standard-library backport
    for name in ("node-uuid", "golang-github-pkg-errors-dev", "librust-regex-dev", "lua-luassert", "zigar-compiler"):
        assert corpus.refusal("debian", name, "", exclusions) is None, name


def test_copies_inside_a_package_are_dropped_wherever_they_sit(tmp_path):
    exclusions = ExclusionList.load(_exclusions(tmp_path))
    stdlib_module = (Path(sysconfig.get_paths()["stdlib"]) / "textwrap.py").read_bytes()
    members = [
        ("package/src/app.py", CODE),
        ("package/vendor/github.com/spf13/cobra/command.go", CODE),
        ("package/node_modules/express/index.js", CODE),
        ("package/node_modules/left-pad/index.js", CODE),
        ("package/third_party/abseil-cpp/strings.cc", CODE),
        ("package/tokio-1.28.0/src/lib.rs", CODE),
        ("package/include/json.hpp", b"/*  JSON for Modern C++\n    version 3.11.2 */\n" + CODE),
        ("package/src/textwrap_copy.py", stdlib_module),
        ("package/zig/build.zig", CODE.replace(b"def", b"fn")),  # a Zig binding's own zig/ folder
        ("package/tests/testdata/sample.py", CODE),
        ("package/lib/parser.py", b"# Code generated by gen.py. DO NOT EDIT.\n" + CODE),
        ("package/dist/app.min.js", b"var a=1;" * 200),
        ("package/src/app_copy.py", CODE),
    ]
    selection = select_files(iter(members), "npm", exclusions)
    dropped = {d.rel_path: d.reason for d in selection.dropped}
    assert [k.rel_path for k in selection.kept] == ["src/app.py", "src/app_copy.py", "zig/build.zig"]
    assert dropped["vendor/github.com/spf13/cobra/command.go"] == "excluded: a copy of cobra"
    assert dropped["node_modules/express/index.js"] == "excluded: a copy of express"
    assert dropped["node_modules/left-pad/index.js"] == "vendored third-party code"
    assert dropped["third_party/abseil-cpp/strings.cc"] == "excluded: a copy of abseil-cpp"
    assert dropped["tokio-1.28.0/src/lib.rs"] == "excluded: a copy of tokio"  # a crate's versioned folder
    assert dropped["include/json.hpp"] == "excluded: a copy of nlohmann-json"
    assert dropped["src/textwrap_copy.py"] == "excluded: a copy of CPython's standard library"
    assert dropped["tests/testdata/sample.py"] == "test fixture"
    assert dropped["lib/parser.py"] == "generated"
    assert dropped["dist/app.min.js"] == "minified or data"
    # The same content twice is left to fetch, which deduplicates across the whole corpus.


def test_a_package_whose_metadata_declares_an_excluded_upstream_is_dropped_whole(tmp_path):
    exclusions = ExclusionList.load(_exclusions(tmp_path))
    manifest = json.dumps({"name": "fork", "repository": {"url": "git+https://github.com/pallets/click.git"}})
    members = [("package/package.json", manifest.encode()), ("package/index.js", CODE)]
    selection = select_files(iter(members), "npm", exclusions)
    assert selection.kept == [] and selection.dropped[0].reason == "excluded: a copy of click"


def test_haddock_source_pages_become_haskell_and_scripts_become_bash(tmp_path):
    exclusions = ExclusionList.load(_exclusions(tmp_path))
    page = (
        '<html><body><pre><span class="hs-comment">-- | Splitting lists on delimiters.</span><span>\n</span>'
        '<span class="hs-keyword">module</span><span> </span><span>Data.Split</span>'
        '<span> </span><span class="hs-keyword">where</span><span>\n</span><span id="line-2"></span>'
        '<span>splitOn</span><span> </span><span class="hs-glyph">::</span><span> </span><span>[a] -&gt; '
        "[[a]]</span><span>\n</span></pre></body></html>"
    )
    script = b'#!/bin/bash\n# Rotates the logs of every service named on the command line.\nfor s in "$@"; do\n'
    members = [
        ("./usr/share/doc/libghc-split-doc/html/src/Data.Split.html", page.encode()),
        ("./usr/share/doc/libghc-split-doc/html/index.html", b"<html>" + CODE + b"</html>"),
        ("./usr/bin/rotate-logs", script + b"  echo $s\ndone\n"),
        ("./usr/bin/tool", b"\x7fELF" + CODE),
        ("./usr/share/man/man1/tool.1.gz", CODE),
    ]
    selection = select_files(iter(members), "debian", exclusions)
    kept = {k.rel_path: k for k in selection.kept}
    assert set(kept) == {"Data/Split.hs", "bin/rotate-logs.sh"}
    assert kept["Data/Split.hs"].language == "haskell"
    assert (
        kept["Data/Split.hs"].data.decode()
        == "-- | Splitting lists on delimiters.\nmodule Data.Split where\nsplitOn :: [a] -> [[a]]\n"
    )
    assert kept["bin/rotate-logs.sh"].language == "bash"


def test_javascript_compiled_from_the_packages_own_typescript_is_dropped(tmp_path):
    exclusions = ExclusionList.load(_exclusions(tmp_path))
    ts = b"export function part(a: number, b: number): number {\n  return a + b;\n}\n"
    js = b'"use strict";\nfunction part(a, b) {\n  return a + b;\n}\nexports.part = part;\n'
    js += b"//# sourceMappingURL=part.js.map\n"
    members = [("package/src/part.ts", ts), ("package/dist/part.js", js), ("package/bin/cli.js", CODE)]
    selection = select_files(iter(members), "npm", exclusions)
    assert [(k.rel_path, k.language) for k in selection.kept] == [
        ("bin/cli.js", "javascript"),
        ("src/part.ts", "typescript"),
    ]


def test_licences_follow_the_rule():
    for licence in ("Expat", "MIT OR Apache-2.0", "BSD-3-clause", "MPL-2.0", "LGPL-2.1+", "GPL-2+ or Artistic", "ISC"):
        assert is_permissive(licence), licence
    for licence in ("GPL-2+", "AGPL-3.0", "unknown", "GPL-3 and MIT", "SSPL-1.0"):
        assert not is_permissive(licence), licence
    dep5 = (
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: x\n\n"
        "Files: *\nCopyright: someone\nLicense: Expat\n\nFiles: contrib/*\nCopyright: else\nLicense: BSD-2-clause\n\n"
        "Files: debian/*\nCopyright: packager\nLicense: GPL-2+\n"
    )
    assert debian_licences(dep5) == ("Expat", ["Expat", "BSD-2-clause"])


def test_the_committed_list_and_manifest_agree_and_refuse_nothing_listed(tmp_path):
    rule, entries = corpus.read_names(corpus.DEFAULT_NAMES)
    assert "training-exclusions.txt" in rule and len(entries) >= 100
    pinned, packages = corpus.read_manifest(corpus.DEFAULT_MANIFEST)
    listed = {(registry, name) for registry, name, _, _ in entries}
    recorded = {(p.registry, p.name) for p in packages} | {(r["registry"], r["name"]) for r in pinned["refused"]}
    assert {(p.registry, p.name) for p in packages} <= listed
    assert recorded <= listed
    for package in packages:
        assert package.version and len(package.sha256) == 64 and is_permissive(package.licence), package.name
        assert package.languages, package.name


def test_the_held_out_doc_comment_sets_sources_are_not_training_data():
    """The doc-comment dev sets (tests/benchmarks/doc_comment_sets.py) measure code the model never saw: none of
    their packages may be in the corpus list, its manifest or its packages' source packages."""
    sets = json.loads((Path(__file__).parent / "benchmarks" / "doc_comment_packages.json").read_text())
    _, entries = corpus.read_names(corpus.DEFAULT_NAMES)
    _, packages = corpus.read_manifest(corpus.DEFAULT_MANIFEST)
    training = {name for _, name, _, _ in entries} | {p.name for p in packages} | {p.source for p in packages}
    held_out = {p["name"] for p in sets["packages"]}
    assert len(held_out) >= 10 and not held_out & training
