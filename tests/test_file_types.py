"""Which files are indexed: the text a developer searches, whatever its type, and never what is not source."""

from __future__ import annotations

import json
from pathlib import Path

from desktop_app.indexing.file_selection import select_files

from .gitrepo import git, init_repo
from .reliability import quarry

# A slice of a kernel-like, polyglot tree: each of these was skipped as "unsupported_type" before.
SEARCHED = {
    "Kconfig": ("kconfig", 'config HERON_WADING\n\tbool "Heron wading support"\n\tdepends on NET\n'),
    "drivers/net/Kconfig.debug": ("kconfig", "config NET_DEBUG_EGRET\n\tbool\n"),
    "Kbuild": ("make", "obj-y += heron/\n"),
    "scripts/Makefile.build": ("make", "quiet_cmd_cc_o_c = CC $@\n"),
    "tools/build.mk": ("make", "CFLAGS += -DSTORK\n"),
    "arch/arm/boot/dts/heron-board.dts": ("devicetree", '/dts-v1/;\n/ {\n\tmodel = "Heron wading board";\n};\n'),
    "arch/arm/boot/dts/heron-soc.dtsi": ("devicetree", '/ {\n\tcompatible = "heron,soc";\n};\n'),
    "arch/x86/entry/entry_64.S": ("asm", "SYM_CODE_START(entry_heron_64)\n\tswapgs\n"),
    "arch/x86/boot/copy.s": ("asm", "copy_ibis:\n\tmovl %eax, %ebx\n"),
    "boot/loader.asm": ("asm", "section .text\nloader_spoonbill:\n\tmov eax, 1\n"),
    "arch/x86/kernel/vmlinux.lds": ("ld", "SECTIONS\n{\n\t.text : { *(.text.crane) }\n}\n"),
    "arch/arm/configs/heron_defconfig": ("kconfig", "CONFIG_HERON_WADING=y\n"),
    "cmake/FindHeron.cmake": ("cmake", "find_path(HERON_INCLUDE_DIR heron.h)\n"),
    "Dockerfile.dev": ("dockerfile", "FROM debian\nRUN make heron\n"),
    "include/config.h.in": ("c", "#define HERON_VERSION @VERSION@\n"),
    ".gitignore": ("ignore", "*.never\n"),
    ".bashrc": ("bash", "alias heron='make heron'\n"),
    "api/heron.proto": ("protobuf", "message Heron { string name = 1; }\n"),
    "setup.cfg": ("ini", "[heron]\nwading = true\n"),
    "MAINTAINERS": ("text", "HERON DRIVER\nM:\tA Keeper <keeper@example.org>\n"),
    # Scripts named for what they do, known by their "#!" line.
    "scripts/checkstack": ("perl", "#!/usr/bin/env perl\nmy $heron_stack = 0;\n"),
    "test/fast/install from source": ("bash", "#!/bin/sh\nset -ex\nnvm install heron\n"),
}
NOT_SOURCE = {
    "Documentation/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "firmware/heron.bin": b"\x00\x01\x02",
    "dist/heron.tar.gz": b"\x1f\x8b\x08\x00",
    "build/heron.o": b"\x7fELF\x02\x01",
    "keys/signing.pem": b"-----BEGIN PRIVATE KEY-----\n",
}
UNKNOWN = {
    ".env": b"HERON_TOKEN=secret\n",  # may hold secrets: never indexed
    ".npmrc": b"//registry.example/:_authToken=secret\n",
    "data/heron.xyz": b"whatever\n",
    "zoneinfo/UTC": b"TZif2\x00\x00\x00",
    "bin/run": b"#!/opt/unknown/interpreter\n",
}


def _write(root: Path) -> None:
    for rel, (_, text) in SEARCHED.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel, data in {**NOT_SOURCE, **UNKNOWN}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def test_build_files_device_trees_and_assembly_are_selected_and_blobs_are_named_as_such(tmp_path):
    _write(tmp_path)
    selection = select_files(tmp_path)
    assert {c.rel_path: c.language for c in selection.candidates} == {rel: lang for rel, (lang, _) in SEARCHED.items()}
    assert dict(selection.skipped) == {
        **dict.fromkeys(NOT_SOURCE, "not_source"),
        **dict.fromkeys(UNKNOWN, "unsupported_type"),
    }


def test_a_kconfig_symbol_a_device_tree_model_and_an_assembler_label_are_found(tmp_path):
    root = tmp_path / "linux"
    _write(root)
    db = tmp_path / "index.db"
    index = quarry("index", root, "--db", db, "--until", "keyword", "--json", "--quiet")
    assert index.returncode == 0, index.stderr
    stats = json.loads(index.stdout)
    assert stats["files_indexed"] == len(SEARCHED)
    assert stats["skipped"] == {"not_source": len(NOT_SOURCE), "unsupported_type": len(UNKNOWN)}
    for word, path in [
        ("HERON_WADING", "Kconfig"),
        ("entry_heron_64", "arch/x86/entry/entry_64.S"),
        ("loader_spoonbill", "boot/loader.asm"),
        ("NET_DEBUG_EGRET", "drivers/net/Kconfig.debug"),
    ]:
        found = quarry("search", word, "--root", root, "--db", db, "--mode", "text", "--json")
        assert found.returncode == 0, found.stderr
        assert path in [hit["path"] for hit in json.loads(found.stdout)["results"]], (word, found.stdout)
    found = quarry("search", "Heron wading board", "--root", root, "--db", db, "--mode", "text", "--json")
    assert [hit["path"] for hit in json.loads(found.stdout)["results"]] == ["arch/arm/boot/dts/heron-board.dts"]


def test_a_header_named_dot_h_holding_cpp_is_read_as_cpp_and_a_c_header_as_c(tmp_path):
    """abseil's, LLVM's and Qt's headers are C++ named `.h`; read with C's grammar their classes and methods were
    lost (abseil-cpp's 380 headers: 1,807 definitions as C, 7,380 as C++)."""
    root = tmp_path / "lib"
    (root / "include").mkdir(parents=True)
    (root / "include/ring_buffer.h").write_text(
        "#pragma once\n#include <cstddef>\n\nnamespace heron {\n\ntemplate <typename T>\nclass RingBuffer {\n"
        " public:\n  std::size_t capacity() const { return capacity_; }\n  void push_back(const T& value) {\n"
        "    data_[end_++ % capacity_] = value;\n  }\n\n private:\n  T* data_;\n  std::size_t end_ = 0;\n"
        "  std::size_t capacity_ = 0;\n};\n\n}  // namespace heron\n"
    )
    (root / "include/ring.h").write_text(
        '#ifdef __cplusplus\nextern "C" {\n#endif\n\nstruct ring { int n; };\n\n'
        "static inline int ring_len(const struct ring *r)\n{\n\treturn r->n;\n}\n\n#ifdef __cplusplus\n}\n#endif\n"
    )
    db = tmp_path / "index.db"
    index = quarry("index", root, "--db", db, "--until", "keyword", "--json", "--quiet")
    assert index.returncode == 0, index.stderr
    languages = {}
    for name in ("push_back", "capacity", "ring_len"):
        found = quarry("search", name, "--root", root, "--db", db, "--mode", "exact", "--json")
        assert found.returncode == 0, found.stderr
        first = json.loads(found.stdout)["results"][0]
        assert first["symbol_name"] == name, found.stdout
        languages[name] = first["language"]
    assert languages == {"push_back": "cpp", "capacity": "cpp", "ring_len": "c"}


def test_a_worktree_copy_of_a_cpp_header_keeps_its_language(tmp_path):
    """A linked worktree's unchanged files reuse the main scope's chunks; the header's language comes with them."""
    main = tmp_path / "main"
    (main / "include").mkdir(parents=True)
    (main / "include/ring_buffer.h").write_text(
        "#pragma once\n\nnamespace heron {\n\nclass RingBuffer {\n public:\n  int capacity() const { return n_; }\n"
        "\n private:\n  int n_ = 0;\n};\n\n}  // namespace heron\n"
    )
    init_repo(main)
    feature = tmp_path / "feature"
    git(main, "worktree", "add", "-q", "-b", "feature", str(feature))
    db = tmp_path / "index.db"
    for root in (main, feature):
        index = quarry("index", root, "--db", db, "--until", "keyword", "--json", "--quiet")
        assert index.returncode == 0, index.stderr
    stats = json.loads(index.stdout)
    assert stats["scope_type"] == "worktree" and stats["files_copied"] == 1
    found = quarry("search", "capacity", "--root", feature, "--db", db, "--mode", "exact", "--json")
    first = json.loads(found.stdout)["results"][0]
    assert (first["symbol_name"], first["language"]) == ("capacity", "cpp")
