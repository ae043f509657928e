"""Which files Quarry indexes, and what language and kind each one is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class FileKind:
    language: str  # lowercase name used by filters and the CLI (`--lang`)
    kind: str  # "code" | "docs" | "config"


_CODE = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescript",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".groovy": "groovy",
    ".swift": "swift",
    ".dart": "dart",
    ".cs": "csharp",
    ".fs": "fsharp",
    ".fsx": "fsharp",
    ".vb": "vbnet",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".m": "objc",
    ".mm": "objc",
    ".rb": "ruby",
    ".php": "php",
    ".pl": "perl",
    ".pm": "perl",
    ".lua": "lua",
    ".r": "r",
    ".jl": "julia",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".clj": "clojure",
    ".zig": "zig",
    ".nim": "nim",
    ".sql": "sql",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".fish": "fish",
    ".ps1": "powershell",
    ".vue": "vue",
    ".svelte": "svelte",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".less": "less",
    ".xaml": "xml",
    ".axaml": "xml",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".cmake": "cmake",
    ".gradle": "groovy",
}
_DOCS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".adoc": "asciidoc",
    ".org": "org",
    ".tex": "latex",
}
_CONFIG = {
    ".json": "json",
    ".jsonc": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".xml": "xml",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".properties": "ini",
    ".dockerfile": "dockerfile",
    ".tf": "hcl",
    ".hcl": "hcl",
    ".env.example": "ini",
}
# Files known by their whole name rather than an extension.
_NAMES = {
    "Dockerfile": FileKind("dockerfile", "config"),
    "Makefile": FileKind("make", "config"),
    "makefile": FileKind("make", "config"),
    "GNUmakefile": FileKind("make", "config"),
    "CMakeLists.txt": FileKind("cmake", "config"),
    "Rakefile": FileKind("ruby", "code"),
    "Gemfile": FileKind("ruby", "config"),
    "Jenkinsfile": FileKind("groovy", "config"),
    "README": FileKind("text", "docs"),
    "LICENSE": FileKind("text", "docs"),
}

EXTENSIONS: dict[str, FileKind] = {
    **{e: FileKind(lang, "code") for e, lang in _CODE.items()},
    **{e: FileKind(lang, "docs") for e, lang in _DOCS.items()},
    **{e: FileKind(lang, "config") for e, lang in _CONFIG.items()},
}

LANGUAGES: frozenset[str] = frozenset(k.language for k in EXTENSIONS.values()) | {k.language for k in _NAMES.values()}


def classify(rel_path: str) -> FileKind | None:
    """The kind of file at `rel_path`, or None when Quarry does not index that type."""
    p = PurePosixPath(rel_path)
    if p.name in _NAMES:
        return _NAMES[p.name]
    name = p.name.lower()
    if name.endswith(".env.example"):
        return EXTENSIONS[".env.example"]
    return EXTENSIONS.get(p.suffix.lower())
