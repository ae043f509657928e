"""Which files Quarry indexes, and what language and kind each one is."""

from __future__ import annotations

import re
from dataclasses import dataclass


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
    ".c++": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".tpp": "cpp",
    ".tcc": "cpp",
    ".inl": "cpp",
    ".inc": "cpp",  # mostly C and C++ fragments (abseil, LLVM); also assembler and PHP includes
    ".cu": "cpp",  # CUDA: C++ with a few keywords more, which the C++ grammar reads past
    ".cuh": "cpp",
    ".ino": "cpp",  # Arduino sketches
    ".s": "asm",  # and ".S", assembler run through the C preprocessor (suffixes are read in lower case)
    ".asm": "asm",
    ".lds": "ld",  # linker scripts (the kernel's vmlinux.lds.S is assembler-preprocessed, so ".S" above)
    ".ld": "ld",
    ".dts": "devicetree",
    ".dtsi": "devicetree",
    ".dtso": "devicetree",
    ".y": "yacc",
    ".yy": "yacc",
    ".l": "lex",
    ".m4": "m4",
    ".ac": "m4",  # configure.ac
    ".asn1": "asn1",
    ".cocci": "cocci",  # Coccinelle semantic patches
    ".gperf": "gperf",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".m": "objc",
    ".mm": "objc",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".podspec": "ruby",
    ".ru": "ruby",
    ".php": "php",
    ".pl": "perl",
    ".pm": "perl",
    ".t": "perl",
    ".raku": "raku",
    ".lua": "lua",
    ".r": "r",
    ".jl": "julia",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".cljc": "clojure",
    ".edn": "clojure",
    ".el": "elisp",
    ".lisp": "lisp",
    ".scm": "scheme",
    ".rkt": "racket",
    ".elm": "elm",
    ".purs": "purescript",
    ".coffee": "coffeescript",
    ".cr": "crystal",
    ".f": "fortran",
    ".f90": "fortran",
    ".f95": "fortran",
    ".f03": "fortran",
    ".pas": "pascal",
    ".adb": "ada",
    ".ads": "ada",
    ".v": "verilog",
    ".sv": "systemverilog",
    ".svh": "systemverilog",
    ".vhd": "vhdl",
    ".vhdl": "vhdl",
    ".sol": "solidity",
    ".nix": "nix",
    ".tcl": "tcl",
    ".awk": "awk",
    ".sed": "sed",
    ".vim": "vim",
    ".glsl": "glsl",
    ".vert": "glsl",
    ".frag": "glsl",
    ".comp": "glsl",
    ".hlsl": "hlsl",
    ".wgsl": "wgsl",
    ".metal": "metal",
    ".pyx": "cython",
    ".pxd": "cython",
    ".pxi": "cython",
    ".bzl": "starlark",
    ".bazel": "starlark",
    ".star": "starlark",
    ".thrift": "thrift",
    ".dot": "dot",
    ".bat": "batch",
    ".cmd": "batch",
    ".zig": "zig",
    ".nim": "nim",
    ".sql": "sql",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".ksh": "bash",
    ".tc": "bash",  # the kernel's ftrace self-tests
    ".bats": "bash",
    ".fish": "fish",
    ".ps1": "powershell",
    ".psm1": "powershell",
    ".psd1": "powershell",
    ".vue": "vue",
    ".svelte": "svelte",
    ".html": "html",
    ".htm": "html",
    ".erb": "template",
    ".ejs": "template",
    ".hbs": "template",
    ".handlebars": "template",
    ".mustache": "template",
    ".jinja": "template",
    ".jinja2": "template",
    ".j2": "template",
    ".njk": "template",
    ".liquid": "template",
    ".twig": "template",
    ".tmpl": "template",
    ".tpl": "template",
    ".stub": "template",  # Laravel's code generator templates
    ".tt": "template",  # T4 and Template Toolkit
    ".cshtml": "template",
    ".razor": "template",
    ".css": "css",
    ".scss": "scss",
    ".sass": "scss",
    ".less": "less",
    ".xaml": "xml",
    ".axaml": "xml",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".cmake": "cmake",
    ".gradle": "groovy",
    ".mk": "make",
    ".mak": "make",
    ".make": "make",
    ".am": "make",  # automake
}
_DOCS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".mkd": "markdown",
    ".rdoc": "rdoc",
    ".pod": "pod",
    ".texi": "texinfo",
    ".texinfo": "texinfo",
    ".asciidoc": "asciidoc",
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
    ".xsd": "xml",
    ".xsl": "xml",
    ".xslt": "xml",
    ".wsdl": "xml",
    ".plist": "xml",
    ".csproj": "xml",
    ".vbproj": "xml",
    ".fsproj": "xml",
    ".vcxproj": "xml",
    ".props": "xml",
    ".targets": "xml",
    ".nuspec": "xml",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".properties": "ini",
    ".service": "ini",  # systemd units
    ".socket": "ini",
    ".timer": "ini",
    ".desktop": "ini",
    ".tbl": "table",  # e.g. the kernel's system call tables
    ".dockerfile": "dockerfile",
    ".tf": "hcl",
    ".hcl": "hcl",
    ".env.example": "ini",
}
# Files known by their whole name rather than an extension.
_NAMES = {
    "Dockerfile": FileKind("dockerfile", "config"),
    "Containerfile": FileKind("dockerfile", "config"),
    "Makefile": FileKind("make", "config"),
    "makefile": FileKind("make", "config"),
    "GNUmakefile": FileKind("make", "config"),
    "Kbuild": FileKind("make", "config"),
    "CMakeLists.txt": FileKind("cmake", "config"),
    "meson.build": FileKind("meson", "config"),
    "BUILD": FileKind("starlark", "config"),
    "WORKSPACE": FileKind("starlark", "config"),
    "Tiltfile": FileKind("starlark", "config"),
    "SConstruct": FileKind("python", "config"),
    "SConscript": FileKind("python", "config"),
    "Rakefile": FileKind("ruby", "code"),
    "Gemfile": FileKind("ruby", "config"),
    "Vagrantfile": FileKind("ruby", "config"),
    "Podfile": FileKind("ruby", "config"),
    "Fastfile": FileKind("ruby", "config"),
    "Brewfile": FileKind("ruby", "config"),
    "Guardfile": FileKind("ruby", "config"),
    "Capfile": FileKind("ruby", "config"),
    "Dangerfile": FileKind("ruby", "config"),
    "Jenkinsfile": FileKind("groovy", "config"),
    "Justfile": FileKind("just", "config"),
    "justfile": FileKind("just", "config"),
    "Procfile": FileKind("procfile", "config"),
    "Pipfile": FileKind("toml", "config"),
    "go.mod": FileKind("gomod", "config"),
    "go.work": FileKind("gomod", "config"),
    "CODEOWNERS": FileKind("codeowners", "config"),
    "OWNERS": FileKind("codeowners", "config"),
    # Ignore and attribute files: text a developer looks in when a file goes missing from a build or an index.
    ".gitignore": FileKind("ignore", "config"),
    ".quarryignore": FileKind("ignore", "config"),
    ".dockerignore": FileKind("ignore", "config"),
    ".npmignore": FileKind("ignore", "config"),
    ".eslintignore": FileKind("ignore", "config"),
    ".prettierignore": FileKind("ignore", "config"),
    ".hgignore": FileKind("ignore", "config"),
    ".gitattributes": FileKind("gitattributes", "config"),
    ".gitmodules": FileKind("ini", "config"),
    ".gitconfig": FileKind("ini", "config"),
    ".editorconfig": FileKind("ini", "config"),
    ".flake8": FileKind("ini", "config"),
    ".pylintrc": FileKind("ini", "config"),
    ".coveragerc": FileKind("ini", "config"),
    ".clang-format": FileKind("yaml", "config"),
    ".clang-tidy": FileKind("yaml", "config"),
    ".yamllint": FileKind("yaml", "config"),
    ".babelrc": FileKind("json", "config"),
    ".eslintrc": FileKind("json", "config"),
    ".prettierrc": FileKind("json", "config"),
    ".bazelrc": FileKind("bazelrc", "config"),
    ".mailmap": FileKind("text", "config"),
    ".nvmrc": FileKind("text", "config"),
    ".python-version": FileKind("text", "config"),
    ".ruby-version": FileKind("text", "config"),
    ".tool-versions": FileKind("text", "config"),
    # Shell start-up files. Not .npmrc, .pypirc, .netrc, .pgpass or .envrc: those commonly hold tokens and
    # passwords, which an index (shared on a team server, say) must not copy.
    ".bashrc": FileKind("bash", "code"),
    ".bash_profile": FileKind("bash", "code"),
    ".bash_login": FileKind("bash", "code"),
    ".bash_logout": FileKind("bash", "code"),
    ".bash_aliases": FileKind("bash", "code"),
    ".profile": FileKind("bash", "code"),
    ".zshrc": FileKind("bash", "code"),
    ".zshenv": FileKind("bash", "code"),
    ".zprofile": FileKind("bash", "code"),
    ".zlogin": FileKind("bash", "code"),
    ".zlogout": FileKind("bash", "code"),
    ".kshrc": FileKind("bash", "code"),
    ".inputrc": FileKind("text", "config"),
    ".vimrc": FileKind("vim", "config"),
    # The text files a project keeps at its top without an extension.
    **{
        name: FileKind("text", "docs")
        for name in (
            "README",
            "LICENSE",
            "LICENCE",
            "COPYING",
            "COPYRIGHT",
            "NOTICE",
            "PATENTS",
            "AUTHORS",
            "CONTRIBUTORS",
            "CREDITS",
            "MAINTAINERS",
            "CHANGELOG",
            "CHANGES",
            "HISTORY",
            "NEWS",
            "TODO",
            "INSTALL",
            "CONTRIBUTING",
            "USAGE",
        )
    },
}
# Files known by how their name begins (Kconfig.debug, Makefile.am, Dockerfile.dev, LICENSE-MIT) or ends
# (the kernel's arch/*/configs/*_defconfig): tried after the whole name and before the extension, so that
# Makefile.am is make, not automake's ".am" guess alone, and Dockerfile.dev is not an unknown ".dev".
_PREFIXES = (
    ("Kconfig", FileKind("kconfig", "config")),
    ("Kbuild.", FileKind("make", "config")),
    ("Makefile.", FileKind("make", "config")),
    ("makefile.", FileKind("make", "config")),
    ("GNUmakefile.", FileKind("make", "config")),
    ("Dockerfile.", FileKind("dockerfile", "config")),
    ("Containerfile.", FileKind("dockerfile", "config")),
    ("LICENSE", FileKind("text", "docs")),
    ("LICENCE", FileKind("text", "docs")),
    ("COPYING", FileKind("text", "docs")),
)
_SUFFIXES = (("defconfig", FileKind("kconfig", "config")),)

# What no one searches as text: images, media, fonts, archives, compiled code, office documents, databases,
# model weights and key material. Passed over without being opened, and said to be so ("not_source"), where
# any other unknown type is one Quarry does not index ("unsupported_type").
NOT_SOURCE_EXTENSIONS = frozenset(
    {
        # images
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".webp", ".tif", ".tiff", ".psd", ".xcf",
        ".heic", ".avif", ".svg", ".eps",
        # audio and video
        ".mp3", ".wav", ".ogg", ".flac", ".m4a", ".aac", ".mp4", ".mkv", ".mov", ".avi", ".webm",
        # fonts
        ".ttf", ".otf", ".woff", ".woff2", ".eot",
        # archives and packages
        ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".jar", ".war", ".whl", ".egg",
        ".deb", ".rpm", ".apk", ".dmg", ".iso", ".img", ".cab", ".msi",
        # compiled code and binaries
        ".o", ".obj", ".a", ".so", ".dylib", ".dll", ".exe", ".lib", ".pyc", ".pyo", ".class", ".dex", ".wasm",
        ".ko", ".elf", ".bin", ".dtb", ".dtbo", ".mo", ".pdb", ".node",
        # documents
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp",
        # databases and data blobs
        ".db", ".sqlite", ".sqlite3", ".mdb", ".npy", ".npz", ".pkl", ".pickle", ".pt", ".pth", ".onnx", ".h5",
        ".hdf5", ".parquet", ".arrow", ".feather", ".safetensors", ".tflite",
        # source maps (generated) and key material
        ".map", ".pem", ".key", ".p12", ".pfx", ".crt", ".cer", ".der", ".jks", ".keystore", ".gpg",
    }
)  # fmt: skip

EXTENSIONS: dict[str, FileKind] = {
    **{e: FileKind(lang, "code") for e, lang in _CODE.items()},
    **{e: FileKind(lang, "docs") for e, lang in _DOCS.items()},
    **{e: FileKind(lang, "config") for e, lang in _CONFIG.items()},
}

LANGUAGES: frozenset[str] = frozenset(
    k.language for k in [*EXTENSIONS.values(), *_NAMES.values(), *(k for _, k in (*_PREFIXES, *_SUFFIXES))]
)


def classify(rel_path: str) -> FileKind | None:
    """The kind of file at `rel_path`, or None when Quarry does not index that type."""
    name = _name(rel_path)
    if name in _NAMES:
        return _NAMES[name]
    for prefix, kind in _PREFIXES:
        if name.startswith(prefix):
            return kind
    for suffix, kind in _SUFFIXES:
        if name.endswith(suffix):
            return kind
    lower = name.lower()
    if lower.endswith(".env.example"):
        return EXTENSIONS[".env.example"]
    if lower.endswith(".in") and not name.endswith(".") and name.lstrip(".").count(".") > 1:
        return classify(rel_path[: -len(".in")])  # a template for the file it makes: config.h.in, setup.py.in
    return EXTENSIONS.get(_suffix(name).lower())


# A path's name and suffix as PurePosixPath gives them, from the string: building a PurePosixPath for each of the
# Linux kernel's 84,475 files was 1.5 of the 4.6 s of a walk of it (cProfile), classify and is_not_source each
# making one.
def _name(rel_path: str) -> str:
    return rel_path.rsplit("/", 1)[-1]


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


# Scripts known by their "#!" line rather than their name (nvm's and bash-it's tests, git hooks, bin/ folders):
# the interpreter's name, version digits dropped (python3.11 is python), and the language it runs.
_INTERPRETERS = {
    **dict.fromkeys(("sh", "bash", "dash", "ash", "ksh", "mksh", "zsh"), "bash"),
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "perl": "perl",
    "ruby": "ruby",
    "php": "php",
    "lua": "lua",
    "luajit": "lua",
    "Rscript": "r",
    "tclsh": "tcl",
    "awk": "awk",
    "gawk": "awk",
    "sed": "sed",
    "make": "make",
    "fish": "fish",
    "pwsh": "powershell",
    "julia": "julia",
    "elixir": "elixir",
    "escript": "erlang",
}
SHEBANG_BYTES = 128  # how much of a file script_kind needs
# A header named `.h` holds C or C++, and C++ (abseil's, LLVM's, Qt's, protobuf's) read with C's grammar gives a
# fraction of its definitions: abseil-cpp's 380 headers 1,807 as C, 7,380 as C++. Lines that only C++ writes: a
# namespace, a template, an access specifier, `using namespace`. The pattern opens with a line end, so that the regex
# engine looks for newlines first (a C header is read whole; a C++ one to its first such line).
_CPP_IN_HEADER = re.compile(
    r"\n[ \t]*(?:namespace(?:[ \t]+\w+)?[ \t]*\{|template[ \t]*<"
    r"|(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b)"
)


def header_language(rel_path: str, language: str, text: str) -> str:
    """The language a file's content shows where its name cannot tell: a `.h` header holding C++ is C++."""
    if language == "c" and rel_path.endswith(".h") and _CPP_IN_HEADER.search(text):
        return "cpp"
    return language


def script_kind(head: bytes) -> FileKind | None:
    """The kind of a script by the "#!" line `head` starts with ("#!/bin/sh", "#!/usr/bin/env -S python3 -u"),
    or None when it has none or names an interpreter Quarry does not know."""
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("latin-1").split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
    if not words:
        return None
    language = _INTERPRETERS.get(words[0].rsplit("/", 1)[-1].rstrip("0123456789."))
    return FileKind(language, "code") if language else None


def is_not_source(rel_path: str) -> bool:
    """Whether `rel_path` is by its extension something no one searches as text (an image, an archive...)."""
    return _suffix(_name(rel_path)).lower() in NOT_SOURCE_EXTENSIONS
