"""What the training corpus must not contain: the projects listed in shared/eval/training-exclusions.txt (the
benchmark's repositories, the doc-comment sets' sources, CPython's standard library), whether a registry
package packages one of them or another package carries a copy.

Projects are matched by upstream, four ways, each conservative (a false match only loses training data):
- a package's name or Debian source package holds an excluded project's name as whole words
  (`golang-github-spf13-cobra-dev`, `python3-requests`, `libuv1-dev`, `librust-tokio-util-dev`, `@trpc/server`);
- a path inside a package holds an excluded `owner/repo` (`vendor/github.com/spf13/cobra/`) or a folder named
  after an excluded project (`node_modules/express/`, `third_party/abseil-cpp/`, `serde-1.0.188/`);
- a package's metadata (package.json, Cargo.toml, PKG-INFO, composer.json, a gemspec, Debian's copyright)
  declares an excluded upstream: the folder it describes is a copy of that project;
- a file carries a known fingerprint of a project that is usually copied as single files (nlohmann's json.hpp,
  fmt's headers, Abseil's sources), or is byte for byte a file of this interpreter's standard library.
"""

from __future__ import annotations

import hashlib
import re
import sys
import sysconfig
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

# Repository names too common to mean the project on their own (nlohmann/json, laravel/framework); the
# project's listed name and owner/repo still match.
_GENERIC_REPO_NAMES = {"json", "framework"}

# Names under which an excluded project is packaged or vendored that hold none of its listed words:
# ripgrep's repository also publishes the globset, ignore and grep crates; Debian calls Abseil libabsl.
_ALIASES = {
    "absl": "abseil-cpp",
    "globset": "ripgrep",
    "ignore": "ripgrep",
    "grep": "ripgrep",
    "bats": "bats-core",
    "uv": "libuv",
    "newtonsoft": "newtonsoft-json",
}

# Text that appears in (nearly) every file of a project that is usually copied file by file.
_FINGERPRINTS = {
    "nlohmann-json": "JSON for Modern C++",
    "fmtlib": "Formatting library for C++",
    "abseil-cpp": "The Abseil Authors",
    "curl": "Daniel Stenberg, <daniel@haxx.se>",
    "redis": "Salvatore Sanfilippo",
    "libuv": "libuv project contributors",
    "requests": "Requests HTTP Library",
}

# Folders that hold other projects' code.
VENDOR_FOLDERS = frozenset(
    {"node_modules", "bower_components", "vendor", "_vendor", "vendored", "third_party", "third-party"}
    | {"thirdparty", "3rdparty", "deps"}
)
_VERSION_SUFFIX = re.compile(r"[-_]v?\d+(\.\d+)*([-+~.][0-9a-z.+~-]*)?$")
_GITHUB_REPO = re.compile(r"github\.com[:/]+([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Excluded:
    name: str
    upstream: str
    owner: str | None  # from a GitHub upstream, lowercase
    repo: str | None


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def _word_forms(word: str) -> set[str]:
    """A name's word as packagers spell it: `libuv1` is libuv, `lang3` is lang, `libcurl4` is curl."""
    forms = {word, word.rstrip("0123456789")}
    forms |= {f[3:] for f in forms if f.startswith("lib") and len(f) > 3}
    return {f for f in forms if f}


def _holds(words: list[str], key: list[str]) -> bool:
    """Whether `key` occurs in `words` as consecutive whole words (in any of their packaged forms)."""
    forms = [_word_forms(w) for w in words]
    n = len(key)
    return any(all(key[j] in forms[i + j] for j in range(n)) for i in range(len(words) - n + 1))


def _repo_of(url: str) -> tuple[str, str] | None:
    match = _GITHUB_REPO.search(url)
    if not match:
        return None
    repo = match.group(2).lower()
    return match.group(1).lower(), repo[:-4] if repo.endswith(".git") else repo


class ExclusionList:
    def __init__(self, entries: list[Excluded]) -> None:
        self.entries = entries
        self.by_name = {e.name: e for e in entries}
        self._repos = {(e.owner, e.repo): e for e in entries if e.owner and e.repo}
        # Each excluded project's names as word lists: its listed name, its repository's, its aliases.
        self._keys: list[tuple[list[str], Excluded]] = []
        for e in entries:
            names = {e.name}
            if e.repo and e.repo not in _GENERIC_REPO_NAMES:
                names.add(e.repo)
            names |= {alias for alias, target in _ALIASES.items() if target == e.name}
            self._keys += [(_words(n), e) for n in names if _words(n)]

    @classmethod
    def load(cls, path: Path) -> ExclusionList:
        entries = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            name, _, upstream = line.partition("\t")
            repo = _repo_of(upstream)
            entries.append(Excluded(name.strip(), upstream.strip(), *(repo or (None, None))))
        return cls(entries)

    @cached_property
    def sha256(self) -> str:
        text = "\n".join(f"{e.name}\t{e.upstream}" for e in self.entries)
        return hashlib.sha256(text.encode()).hexdigest()

    def match_name(self, name: str) -> Excluded | None:
        """The excluded project a package (or source package, or folder) name refers to, if any."""
        words = _words(name)
        for key, entry in self._keys:
            if _holds(words, key):
                return entry
        repo_entry = self._repos.get(_repo_of(name) or ("", ""))
        if repo_entry is not None:
            return repo_entry
        # golang-github-go-chi-chi-dev: a Go package's name spells its module's owner and repository.
        return next((e for (owner, repo), e in self._repos.items() if _holds(words, _words(f"{owner} {repo}"))), None)

    def match_url(self, url: str) -> Excluded | None:
        """The excluded project an upstream address (a repository, or a registry page ending in a package
        name) is, if any."""
        repo = _repo_of(url)
        if repo:
            return self._repos.get(repo)
        last = url.rstrip("/").rsplit("/", 1)[-1]
        return self.match_name(last) if last else None

    def match_path(self, rel_path: str, packaged_tree: bool) -> Excluded | None:
        """The excluded project whose copy the folder of `rel_path` is, if any. A folder's name alone says so
        where a copy would sit: right under a vendoring folder, versioned like a crate or gem
        (serde-1.0.188/), or, in a Debian package (`packaged_tree`), at the top of the installed tree
        (dist-packages/click/, nodejs/express/). Elsewhere a folder may share a short name by chance (zig/
        in a Zig binding)."""
        folders = [s for s in rel_path.split("/")[:-1] if s]
        lowered = [s.lower().removesuffix(".git") for s in folders]
        for i in range(len(lowered) - 1):
            if entry := self._repos.get((lowered[i], lowered[i + 1])):
                return entry
        top = next((i for i, f in enumerate(folders) if not f.startswith("@")), None)  # @types/, @scope/
        for i, folder in enumerate(folders):
            bare = _VERSION_SUFFIX.sub("", folder)
            placed = (packaged_tree and i == top) or (i > 0 and folders[i - 1].lower() in VENDOR_FOLDERS)
            if not placed and bare == folder:
                continue
            # A whole folder name must be the project's name; one merely containing it (express-session/)
            # is another project.
            words = _words(bare)
            for key, entry in self._keys:
                if len(words) == len(key) and _holds(words, key):
                    return entry
        return None

    def match_text(self, text: str) -> Excluded | None:
        """The excluded project whose fingerprint a file's text carries, if any."""
        for name, mark in _FINGERPRINTS.items():
            if name in self.by_name and mark in text:
                return self.by_name[name]
        return None

    @cached_property
    def stdlib_hashes(self) -> frozenset[str]:
        """sha256 of every module of this interpreter's standard library, when CPython's is excluded."""
        if not any(e.name.startswith("cpython") for e in self.entries):
            return frozenset()
        root = Path(sysconfig.get_paths()["stdlib"])
        hashes = set()
        for path in root.rglob("*.py"):
            if "site-packages" in path.parts:
                continue
            try:
                hashes.add(hashlib.sha256(path.read_bytes()).hexdigest())
            except OSError:
                continue
        return frozenset(hashes)

    @cached_property
    def stdlib_entry(self) -> Excluded | None:
        return next((e for e in self.entries if e.name.startswith("cpython")), None)

    def is_stdlib_module(self, name: str) -> bool:
        """Whether a Python distribution's name is a standard-library module's (a backport of it)."""
        return self.stdlib_entry is not None and name.lower().replace("-", "_") in sys.stdlib_module_names
