"""The chunker, with the real tokenizer and the real tree-sitter grammars."""

from __future__ import annotations

import re
import textwrap
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer
from tree_sitter import Parser

from desktop_app.indexing import syntax
from desktop_app.indexing.chunk import CHUNK_TYPES, Chunk
from desktop_app.indexing.chunking import chunk_file

TOKENIZER = Path(__file__).resolve().parents[1] / "resources/models/all-MiniLM-L6-v2-int8/tokenizer.json"


@cache
def _tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    # tokenizer.json pads and truncates to 128 for the model; counting needs the true lengths.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(strings: Sequence[str]) -> list[int]:
    return [len(e.ids) for e in _tokenizer().encode_batch(list(strings), add_special_tokens=False)]


def check_invariants(text: str, chunks: list[Chunk], max_tokens: int) -> None:
    lines = text.split("\n")
    counts = count_tokens(lines)
    covered: set[int] = set()
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert lines[chunk.start_line - 1].strip() and lines[chunk.end_line - 1].strip(), chunk
        assert chunk.chunk_type in CHUNK_TYPES
        assert chunk.token_count == sum(counts[chunk.start_line - 1 : chunk.end_line])
        assert chunk.token_count <= max_tokens or chunk.start_line == chunk.end_line, chunk
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    uncovered = [row for row, line in enumerate(lines, 1) if line.strip() and row not in covered]
    assert not uncovered


def chunks_of(
    source: str, language: str, rel_path: str = "src/file", max_tokens: int = 256, overlap_tokens: int = 32
) -> list[Chunk]:
    text = textwrap.dedent(source).lstrip("\n")
    chunks = chunk_file(text, language, rel_path, count_tokens, max_tokens, overlap_tokens)
    check_invariants(text, chunks, max_tokens)
    return chunks


def symbols(chunks: list[Chunk]) -> list[tuple]:
    """(name, symbol type, parent, start, end) of each named chunk, in file order."""
    return [
        (c.symbol_name, c.symbol_type, c.parent_symbol, c.start_line, c.end_line)
        for c in chunks
        if c.symbol_name is not None
    ]


# ---- python ----------------------------------------------------------------------------------------

PYTHON = '''
"""Shapes and their areas."""

import math
from dataclasses import dataclass

SCALE = 2.0


# A rectangle on the plane, axis-aligned; the corner is its lower-left point.
@dataclass
class Rectangle:
    """An axis-aligned rectangle with a width, a height and a lower-left corner."""

    width: float
    height: float
    corner: tuple[float, float] = (0.0, 0.0)

    def area(self) -> float:
        """The area, scaled by the module-wide scale factor."""
        return self.width * self.height * SCALE

    @property
    def diagonal(self) -> float:
        def square(value: float) -> float:
            return value * value
        return math.sqrt(square(self.width) + square(self.height))


def circle_area(radius: float) -> float:
    """The area of a circle of the given radius."""
    return math.pi * radius * radius


if __name__ == "__main__":
    print(circle_area(1.0))
'''


def test_python_class_too_big_is_opened_into_type_and_method_chunks():
    chunks = chunks_of(PYTHON, "python", "shapes.py", max_tokens=80)
    assert symbols(chunks) == [
        ("Rectangle", "class", None, 9, 16),  # comment, decorator, header, docstring and fields
        ("area", "method", "Rectangle", 18, 20),
        ("diagonal", "method", "Rectangle", 22, 26),  # from the decorator
        ("circle_area", "function", None, 29, 31),
    ]
    by_name = {c.symbol_name: c for c in chunks}
    assert by_name["Rectangle"].chunk_type == "type"
    assert by_name["area"].chunk_type == by_name["circle_area"].chunk_type == "function"
    # The nested function stays in its parent's chunk.
    assert "def square" in by_name["diagonal"].text
    code = [(c.chunk_type, c.start_line, c.end_line) for c in chunks if c.symbol_name is None]
    assert code == [("code", 1, 6), ("code", 34, 35)]


def test_python_class_is_split_into_header_and_methods():
    chunks = chunks_of(PYTHON, "python", "shapes.py")
    assert symbols(chunks) == [
        ("Rectangle", "class", None, 9, 16),
        ("area", "method", "Rectangle", 18, 20),
        ("diagonal", "method", "Rectangle", 22, 26),
        ("circle_area", "function", None, 29, 31),
    ]


def test_python_nested_classes_give_dotted_parents():
    source = '''
    class Outer:
        """Outer holds an inner class whose methods are long enough to need their own chunks."""

        class Inner:
            """Inner does the actual work of the outer class, one step at a time."""

            def step(self, amount: int) -> int:
                total = amount * 2 + 1
                return total - amount

            def reset(self) -> None:
                self.total = 0
                self.count = 0

        def run(self) -> int:
            return self.Inner().step(3)
    '''
    chunks = chunks_of(source, "python", max_tokens=40)
    assert [s[:3] for s in symbols(chunks)] == [
        ("Outer", "class", None),
        ("Inner", "class", "Outer"),
        ("step", "method", "Outer.Inner"),
        ("reset", "method", "Outer.Inner"),
        ("run", "method", "Outer"),
    ]


def test_adjacent_small_functions_are_not_merged():
    source = "def one():\n    return 1\n\ndef two():\n    return 2\n\ndef three():\n    return 3\n"
    chunks = chunks_of(source, "python")
    assert symbols(chunks) == [
        ("one", "function", None, 1, 2),
        ("two", "function", None, 4, 5),
        ("three", "function", None, 7, 8),
    ]


def test_comment_only_stretch_is_a_comment_chunk():
    source = """
    # Copyright the authors.
    # Licensed under the Apache License, Version 2.0.

    def main():
        return 0
    """
    chunks = chunks_of(source, "python")
    assert [(c.chunk_type, c.start_line, c.end_line) for c in chunks] == [("comment", 1, 2), ("function", 4, 5)]


def test_long_function_is_split_into_overlapping_windows_of_one_symbol():
    body = "\n".join(f"    total += compute_value(item_{i}, factor={i}) * weight" for i in range(60))
    source = f"import os\n\n\n@cached\ndef accumulate(items):\n    total = 0\n{body}\n    return total\n"
    chunks = chunks_of(source, "python", max_tokens=96, overlap_tokens=24)
    windows = [c for c in chunks if c.symbol_name == "accumulate"]
    assert len(windows) > 3
    assert all(c.symbol_type == "function" and c.chunk_type == "function" and c.parent_symbol is None for c in windows)
    assert all(c.token_count <= 96 for c in windows)
    assert windows[0].start_line == 4  # the decorator, right before the signature
    assert windows[-1].end_line == source.count("\n")
    for before, after in zip(windows, windows[1:], strict=False):
        assert after.start_line <= before.end_line  # overlapping
        assert after.start_line > before.start_line
        overlap = "\n".join(source.split("\n")[after.start_line - 1 : before.end_line])
        assert sum(count_tokens(overlap.split("\n"))) <= 24


def test_long_method_windows_keep_their_class_as_parent():
    body = "\n".join(f"        self.values.append(transform(row_{i}, scale={i}))" for i in range(40))
    source = (
        f"class Loader:\n    def load(self, rows):\n{body}\n        return self.values\n\n"
        f"    def clear(self):\n        self.values = []\n\n\nend = 10\n"
    )
    chunks = chunks_of(source, "python", max_tokens=128)
    load = [c for c in chunks if c.symbol_name == "load"]
    assert len(load) > 2 and {(c.symbol_type, c.parent_symbol) for c in load} == {("method", "Loader")}
    assert load[0].start_line == 2 and load[-1].end_line == 43
    assert symbols(chunks)[-1] == ("clear", "method", "Loader", 45, 46)
    # A statement after the class is code of its own, even one that starts like Ruby's `end`.
    assert (chunks[-1].chunk_type, chunks[-1].start_line, chunks[-1].symbol_name) == ("code", 49, None)


def test_count_tokens_is_called_once_per_file_with_each_distinct_line_once():
    calls = []

    def counting(strings: Sequence[str]) -> list[int]:
        calls.append(len(strings))
        return count_tokens(strings)

    text = textwrap.dedent(PYTHON)
    chunk_file(text, "python", "shapes.py", counting, max_tokens=32)
    assert calls == [len(set(text.split("\n")))] and len(set(text.split("\n"))) < len(text.split("\n"))


def test_whitespace_only_file_gives_no_chunks():
    assert chunk_file("", "python", "a.py", count_tokens) == []
    assert chunk_file("  \n\t\n\n", "markdown", "a.md", count_tokens) == []


# ---- the other grammars ----------------------------------------------------------------------------

JAVASCRIPT = """
import { readFile } from "node:fs/promises";

// Caches parsed files by path so that each one is read and parsed only once.
export class FileCache {
  #entries = new Map();

  constructor(parser) {
    this.parser = parser;
  }

  async get(path) {
    if (!this.#entries.has(path)) {
      this.#entries.set(path, this.parser(await readFile(path, "utf8")));
    }
    return this.#entries.get(path);
  }

  onEvict = (path) => {
    this.#entries.delete(path);
  };
}

/** Parse a comma-separated line into trimmed fields. */
export const parseLine = (line) => line.split(",").map((field) => field.trim());

function* range(start, end) {
  for (let i = start; i < end; i++) yield i;
}
"""


def test_javascript():
    chunks = chunks_of(JAVASCRIPT, "javascript", "src/cache.js", max_tokens=96)
    assert symbols(chunks) == [
        ("FileCache", "class", None, 3, 5),
        ("constructor", "method", "FileCache", 7, 9),
        ("get", "method", "FileCache", 11, 16),
        ("onEvict", "method", "FileCache", 18, 21),  # the class's closing brace joins its last member
        ("parseLine", "function", None, 23, 24),
        ("range", "function", None, 26, 28),
    ]


TYPESCRIPT = """
import { Injectable } from "@angular/core";

export interface Shape {
  area(): number;
  name: string;
}

export enum Unit { Metre, Foot }

/** Keeps the shapes the user has drawn, in drawing order. */
@Injectable({ providedIn: "root" })
export class ShapeStore<T extends Shape> {
  private readonly shapes: T[] = [];

  add(shape: T): void {
    this.shapes.push(shape);
  }

  totalArea(unit: Unit = Unit.Metre): number {
    const sum = this.shapes.reduce((acc, s) => acc + s.area(), 0);
    return unit === Unit.Foot ? sum * 10.7639 : sum;
  }
}

export const largest = <T extends Shape>(shapes: T[]): T | undefined =>
  shapes.reduce<T | undefined>((best, s) => (!best || s.area() > best.area() ? s : best), undefined);

namespace Geometry {
  export function distance(a: number, b: number): number {
    return Math.abs(a - b);
  }
}
"""


def test_typescript():
    chunks = chunks_of(TYPESCRIPT, "typescript", "src/store.ts", max_tokens=80)
    assert symbols(chunks) == [
        ("Shape", "interface", None, 3, 6),
        ("Unit", "enum", None, 8, 8),
        ("ShapeStore", "class", None, 10, 13),  # doc comment, decorator, header, field
        ("add", "method", "ShapeStore", 15, 17),
        ("totalArea", "method", "ShapeStore", 19, 23),
        ("largest", "function", None, 25, 26),
        ("Geometry", "namespace", None, 28, 28),
        ("distance", "function", "Geometry", 29, 32),
    ]
    assert [c.chunk_type for c in chunks if c.symbol_name] == [
        "type",
        "type",
        "type",
        "function",
        "function",
        "function",
        "type",
        "function",
    ]


def test_tsx_uses_the_tsx_grammar():
    source = """
    import React from "react";

    type Props = { items: string[] };

    export function ItemList({ items }: Props) {
      return <ul className="items">{items.map((item) => <li key={item}>{item}</li>)}</ul>;
    }

    export const Empty = () => <p>Nothing here yet.</p>;
    """
    chunks = chunks_of(source, "typescript", "src/ItemList.tsx")
    assert symbols(chunks) == [("ItemList", "function", None, 5, 7), ("Empty", "function", None, 9, 9)]


RUST = """
use std::fmt;

/// A point in the plane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    /// The origin.
    pub fn origin() -> Self {
        Point { x: 0.0, y: 0.0 }
    }

    pub fn distance(&self, other: &Point) -> f64 {
        ((self.x - other.x).powi(2) + (self.y - other.y).powi(2)).sqrt()
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub fn midpoint(a: Point, b: Point) -> Point {
    Point { x: (a.x + b.x) / 2.0, y: (a.y + b.y) / 2.0 }
}
"""


def test_rust():
    chunks = chunks_of(RUST, "rust", "src/point.rs", max_tokens=64)
    assert symbols(chunks) == [
        ("Point", "struct", None, 3, 8),  # doc comment and attribute included
        ("Point", "impl", None, 10, 10),
        ("origin", "method", "Point", 11, 14),
        ("distance", "method", "Point", 16, 19),
        ("Point", "impl", None, 21, 21),
        ("fmt", "method", "Point", 22, 25),
        ("midpoint", "function", None, 27, 29),
    ]


GO = """
package server

import "net/http"

// Server answers health checks.
type Server struct {
	addr string
	mux  *http.ServeMux
}

// Handler is anything that can serve a request.
type Handler interface {
	ServeHTTP(w http.ResponseWriter, r *http.Request)
}

// Start listens on the configured address.
func (s *Server) Start() error {
	return http.ListenAndServe(s.addr, s.mux)
}

func New(addr string) *Server {
	return &Server{addr: addr, mux: http.NewServeMux()}
}
"""


def test_go():
    chunks = chunks_of(GO, "go", "server/server.go")
    assert symbols(chunks) == [
        ("Server", "struct", None, 5, 9),
        ("Handler", "interface", None, 11, 14),
        ("Start", "method", "Server", 16, 19),  # the receiver's type is the parent
        ("New", "function", None, 21, 23),
    ]
    assert chunks[0].text == 'package server\n\nimport "net/http"' and chunks[0].chunk_type == "code"


JAVA = """
package com.example.shapes;

import java.util.List;

/**
 * A polygon given by its corners.
 */
@SuppressWarnings("unused")
public class Polygon implements Shape {
    private final List<Point> corners;

    public Polygon(List<Point> corners) {
        this.corners = List.copyOf(corners);
    }

    /** Twice the signed area, by the shoelace formula. */
    @Override
    public double area() {
        double sum = 0;
        for (int i = 0; i < corners.size(); i++) {
            Point a = corners.get(i), b = corners.get((i + 1) % corners.size());
            sum += a.x() * b.y() - b.x() * a.y();
        }
        return Math.abs(sum) / 2;
    }

    enum Winding { CLOCKWISE, COUNTER_CLOCKWISE }
}
"""


def test_java():
    chunks = chunks_of(JAVA, "java", "src/Polygon.java", max_tokens=160)
    assert symbols(chunks) == [
        ("Polygon", "class", None, 5, 10),  # Javadoc and annotation included
        ("Polygon", "method", "Polygon", 12, 14),
        ("area", "method", "Polygon", 16, 25),
        ("Winding", "enum", "Polygon", 27, 28),
    ]


CSHARP = """
using System;

namespace Shop.Billing
{
    /// <summary>An invoice line: a product, a quantity and a unit price.</summary>
    public record Line(string Product, int Quantity, decimal UnitPrice);

    [Serializable]
    public class Invoice
    {
        public List<Line> Lines { get; } = new();

        public decimal Total()
        {
            decimal total = 0;
            foreach (var line in Lines) total += line.Quantity * line.UnitPrice;
            return total;
        }

        public void Add(Line line) => Lines.Add(line);
    }
}
"""


def test_csharp():
    chunks = chunks_of(CSHARP, "csharp", "Billing/Invoice.cs", max_tokens=64)
    assert symbols(chunks) == [
        ("Billing", "namespace", "Shop", 3, 4),
        ("Line", "record", "Shop.Billing", 5, 6),
        ("Invoice", "class", "Shop.Billing", 8, 11),
        ("Total", "method", "Shop.Billing.Invoice", 13, 18),
        ("Add", "method", "Shop.Billing.Invoice", 20, 22),
    ]


def test_csharp_file_scoped_namespace_is_the_parent():
    source = """
    namespace Shop.Billing;

    public class Invoice
    {
        public decimal Total() => 0;
    }
    """
    assert symbols(chunks_of(source, "csharp", "Invoice.cs")) == [
        ("Invoice", "class", "Shop.Billing", 3, 4),
        ("Total", "method", "Shop.Billing.Invoice", 5, 6),
    ]


C_SOURCE = """
#ifndef RING_H
#define RING_H

#include <stddef.h>

/* A fixed-size ring buffer of bytes. */
typedef struct {
    unsigned char *data;
    size_t head, tail, size;
} Ring;

struct stats { size_t pushed; size_t dropped; };

/* Push one byte; returns 0 when the ring is full. */
static int
ring_push(Ring *ring, unsigned char byte)
{
    size_t next = (ring->head + 1) % ring->size;
    if (next == ring->tail)
        return 0;
    ring->data[ring->head] = byte;
    ring->head = next;
    return 1;
}

#endif
"""


def test_c():
    chunks = chunks_of(C_SOURCE, "c", "src/ring.h")
    assert symbols(chunks) == [
        ("Ring", "struct", None, 6, 10),
        ("stats", "struct", None, 12, 12),
        ("ring_push", "function", None, 14, 24),
    ]
    assert [(c.start_line, c.end_line) for c in chunks if c.symbol_name is None] == [(1, 4), (26, 26)]


CPP = """
#include <vector>

namespace geo {

// A growable list of points.
class PointList {
 public:
  explicit PointList(std::size_t reserve) { points_.reserve(reserve); }

  void add(double x, double y) {
    points_.push_back({x, y});
  }

  double length() const;

 private:
  struct Point { double x, y; };
  std::vector<Point> points_;
};

double PointList::length() const {
  double total = 0;
  for (std::size_t i = 1; i < points_.size(); ++i) total += distance(points_[i - 1], points_[i]);
  return total;
}

}  // namespace geo
"""


def test_cpp():
    chunks = chunks_of(CPP, "cpp", "src/points.cpp", max_tokens=80)
    assert symbols(chunks) == [
        ("geo", "namespace", None, 3, 3),
        ("PointList", "class", "geo", 5, 7),
        ("PointList", "method", "geo.PointList", 8, 8),
        ("add", "method", "geo.PointList", 10, 12),
        ("length", "method", "geo.PointList", 21, 27),  # defined out of class, as PointList::length
    ]
    assert [(c.chunk_type, c.parent_symbol, c.start_line, c.end_line) for c in chunks if c.symbol_name is None] == [
        ("code", None, 1, 1),
        ("code", "geo.PointList", 14, 19),
    ]


CPP_WITH_MACROS = """
#include <utility>

NLOHMANN_JSON_NAMESPACE_BEGIN

template<typename ValueType, typename>
struct adl_serializer
{
    template<typename BasicJsonType>
    static void from_json(BasicJsonType && j, ValueType& val)
    {
        ::nlohmann::from_json(std::forward<BasicJsonType>(j), val);
    }
};

class LEVELDB_EXPORT ABSL_ATTRIBUTE_OWNER Table final {
 public:
  Q_OBJECT
  Table() = default;
  int size() const { return size_; }
 private:
  int size_ = 0;
};

NLOHMANN_JSON_NAMESPACE_END
"""


def test_cpp_macros_the_grammar_cannot_read_do_not_hide_the_definitions_around_them():
    """A line holding one upper-case macro (a namespace's opening, Qt's `Q_OBJECT`) and export or attribute macros
    between `class` and its name: before they were blanked for the parser, adl_serializer.hpp gave no definition."""
    chunks = chunks_of(CPP_WITH_MACROS, "cpp", "include/adl_serializer.hpp", max_tokens=80)
    assert [(name, kind, parent) for name, kind, parent, _, _ in symbols(chunks)] == [
        ("adl_serializer", "struct", None),
        ("from_json", "method", "adl_serializer"),
        ("Table", "class", None),
        ("Table", "method", "Table"),
        ("size", "method", "Table"),
    ]
    # What was blanked for the parser is still in the chunks' text, line for line.
    assert "NLOHMANN_JSON_NAMESPACE_BEGIN" in "".join(c.text for c in chunks)
    assert any("class LEVELDB_EXPORT ABSL_ATTRIBUTE_OWNER Table final {" in c.text for c in chunks)
    # C reads its lone macro lines the same way (glibc's `__BEGIN_DECLS`, GLib's `G_BEGIN_DECLS`).
    c_chunks = chunks_of("G_BEGIN_DECLS\n\nint ring_len(const struct ring *r)\n{\n  return r->n;\n}\n", "c")
    assert symbols(c_chunks)[0][:2] == ("ring_len", "function")


RUBY = """
require "json"

module Inventory
  # A stock item with a name and a count.
  class Item
    attr_reader :name, :count

    def initialize(name, count = 0)
      @name = name
      @count = count
    end

    def self.from_json(text)
      data = JSON.parse(text)
      new(data.fetch("name"), data.fetch("count", 0))
    end
  end
end

def restock(item, amount)
  item.count + amount
end
"""


def test_ruby():
    chunks = chunks_of(RUBY, "ruby", "lib/inventory.rb", max_tokens=64)
    assert symbols(chunks) == [
        ("Inventory", "module", None, 3, 3),
        ("Item", "class", "Inventory", 4, 6),
        ("initialize", "method", "Inventory.Item", 8, 11),
        ("from_json", "method", "Inventory.Item", 13, 18),
        ("restock", "function", None, 20, 22),
    ]


PHP = """
<?php

namespace App\\Billing;

use App\\Models\\Order;

/**
 * Computes what an order costs.
 */
final class PriceCalculator
{
    private float $taxRate = 0.2;

    public function total(Order $order): float
    {
        $net = array_sum(array_map(fn ($line) => $line->price * $line->quantity, $order->lines));
        return round($net * (1 + $this->taxRate), 2);
    }
}

function format_price(float $amount): string
{
    return number_format($amount, 2) . " EUR";
}
"""


def test_php():
    chunks = chunks_of(PHP, "php", "src/Billing/PriceCalculator.php", max_tokens=96)
    assert symbols(chunks) == [
        ("PriceCalculator", "class", "App.Billing", 7, 12),
        ("total", "method", "App.Billing.PriceCalculator", 14, 19),
        ("format_price", "function", "App.Billing", 21, 24),
    ]


BASH = """
#!/usr/bin/env bash
set -euo pipefail

# Print a message to stderr and exit.
die() {
  echo "error: $*" >&2
  exit 1
}

function build {
  make -j"$(nproc)" || die "build failed"
}

build "$@"
"""


def test_bash():
    chunks = chunks_of(BASH, "bash", "scripts/build.sh")
    assert symbols(chunks) == [("die", "function", None, 4, 8), ("build", "function", None, 10, 12)]
    assert [(c.start_line, c.end_line) for c in chunks if c.symbol_name is None] == [(1, 2), (14, 14)]


# nvm.sh's shape: the whole script in one `{ ... }`, so that a half-downloaded file runs nothing, and functions
# defined only when a condition holds.
BASH_WRAPPED = """#!/bin/sh
{ # this ensures the entire script is downloaded #

nvm_has() {
  type "${1-}" >/dev/null 2>&1
}

if [ -n "${ZSH_VERSION-}" ]; then
  nvm_is_zsh() {
    return 0
  }
elif [ -n "${KSH_VERSION-}" ]; then
  nvm_is_ksh() {
    return 0
  }
else
  nvm_is_zsh() {
    return 1
  }
fi

nvm "$@"
} # this ensures the entire script is downloaded #
"""


def test_shell_functions_inside_a_brace_group_or_an_if_are_symbols():
    chunks = chunks_of(BASH_WRAPPED, "bash", "nvm.sh")
    assert symbols(chunks) == [
        ("nvm_has", "function", None, 4, 6),
        ("nvm_is_zsh", "function", None, 9, 11),
        ("nvm_is_ksh", "function", None, 13, 15),
        ("nvm_is_zsh", "function", None, 17, 19),
    ]


KOTLIN = """
package com.example.cart

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.map

/** One line of a cart: a product and how many of it. */
data class Line(val sku: String, val quantity: Int, val unitPrice: Long)

interface CartRepository {
    suspend fun load(id: CartId): Cart?

    fun observe(id: CartId): Flow<Cart?>
}

@JvmInline
value class CartId(val value: String)

class Cart(val id: CartId, private val lines: MutableList<Line> = mutableListOf()) {
    val total: Long
        get() = lines.sumOf { it.quantity * it.unitPrice }

    fun add(line: Line) {
        val existing = lines.indexOfFirst { it.sku == line.sku }
        if (existing >= 0) {
            lines[existing] = lines[existing].copy(quantity = lines[existing].quantity + line.quantity)
        } else {
            lines += line
        }
    }

    operator fun contains(sku: String): Boolean = lines.any { it.sku == sku }

    companion object {
        fun empty(id: String) = Cart(CartId(id))
    }
}

enum class Currency(val symbol: String) {
    EUR("€"),
    USD("$");

    fun format(cents: Long): String = "$symbol${cents / 100}.${cents % 100}"
}

object Checkout {
    fun totalOf(carts: List<Cart>): Long = carts.sumOf { it.total }
}

// An extension function is filed under the type it extends.
fun CartRepository.totals(id: CartId): Flow<Long?> = observe(id).map { it?.total }
"""


def test_kotlin():
    chunks = chunks_of(KOTLIN, "kotlin", "src/main/kotlin/Cart.kt", max_tokens=128)
    assert symbols(chunks) == [
        ("Line", "class", None, 6, 7),
        ("CartRepository", "interface", None, 9, 13),  # abstract members only: kept whole
        ("CartId", "class", None, 15, 16),
        ("Cart", "class", None, 18, 20),
        ("add", "method", "Cart", 22, 29),
        ("contains", "method", "Cart", 31, 31),
        ("Companion", "object", "Cart", 33, 33),
        ("empty", "method", "Cart.Companion", 34, 36),
        ("Currency", "enum", None, 38, 40),
        ("format", "method", "Currency", 42, 43),
        ("Checkout", "object", None, 45, 45),
        ("totalOf", "method", "Checkout", 46, 47),
        ("totals", "method", "CartRepository", 49, 50),  # the extended type is the parent
    ]


SWIFT = """
import CoreGraphics

/// Something that can be drawn on a canvas.
protocol Drawable {
    var bounds: CGRect { get }
    func draw(in context: CGContext)
}

struct Point: Hashable {
    var x: Double
    var y: Double

    init(x: Double = 0, y: Double = 0) {
        self.x = x
        self.y = y
    }

    static func + (lhs: Point, rhs: Point) -> Point {
        Point(x: lhs.x + rhs.x, y: lhs.y + rhs.y)
    }
}

enum Shape {
    case circle(center: Point, radius: Double)
    case polygon([Point])

    var area: Double {
        switch self {
        case let .circle(_, radius): return .pi * radius * radius
        case let .polygon(points): return Shape.shoelace(points)
        }
    }

    static func shoelace(_ points: [Point]) -> Double {
        let pairs = zip(points, points.dropFirst() + points.prefix(1))
        return abs(pairs.reduce(0) { $0 + $1.0.x * $1.1.y - $1.1.x * $1.0.y }) / 2
    }
}

@MainActor
final class Canvas {
    private(set) var shapes: [Shape] = []

    func add(_ shape: Shape) {
        shapes.append(shape)
    }

    deinit {
        print("canvas released")
    }
}

extension Canvas: CustomStringConvertible {
    nonisolated var description: String { "Canvas" }

    func clear() {
        shapes.removeAll()
    }
}

func square(side: Double) -> Shape {
    .polygon([Point(), Point(x: side), Point(x: side, y: side), Point(y: side)])
}
"""


def test_swift():
    chunks = chunks_of(SWIFT, "swift", "Sources/Shapes/Shapes.swift", max_tokens=128)
    assert symbols(chunks) == [
        ("Drawable", "protocol", None, 3, 7),
        ("Point", "struct", None, 9, 11),
        ("init", "method", "Point", 13, 16),
        ("+", "method", "Point", 18, 21),
        ("Shape", "enum", None, 23, 32),  # cases and computed properties stay with the header
        ("shoelace", "method", "Shape", 34, 38),
        ("Canvas", "class", None, 40, 42),
        ("add", "method", "Canvas", 44, 46),
        ("deinit", "method", "Canvas", 48, 51),
        ("Canvas", "extension", None, 53, 54),
        ("clear", "method", "Canvas", 56, 59),
        ("square", "function", None, 61, 63),
    ]


SCALA = """
package shop.billing

import cats.{Applicative, Monoid}
import cats.syntax.all._

/** A price in cents. */
final case class Money(cents: Long) extends AnyVal {
  def +(other: Money): Money = Money(cents + other.cents)
}

object Money {
  val zero: Money = Money(0)

  implicit val moneyMonoid: Monoid[Money] = Monoid.instance(zero, _ + _)

  def parse(text: String): Option[Money] =
    text.toDoubleOption.map(d => Money((d * 100).round))
}

sealed trait Discount {
  def apply(total: Money): Money

  def describe: String = getClass.getSimpleName
}

object Discount {
  final case class Percent(rate: Int) extends Discount {
    def apply(total: Money): Money = Money(total.cents * (100 - rate) / 100)
  }

  case object NoDiscount extends Discount {
    def apply(total: Money): Money = total
  }
}

class InvoiceService[F[_]: Applicative](discount: Discount) {
  def total(lines: List[Money]): F[Money] =
    discount(lines.combineAll).pure[F]
}

enum Currency:
  case Eur, Usd

  def symbol: String = this match
    case Eur => "€"
    case Usd => "$"

extension (money: Money)
  def format: String = f"${money.cents / 100}%d.${money.cents % 100}%02d"
"""


def test_scala():
    chunks = chunks_of(SCALA, "scala", "src/main/scala/shop/billing/Money.scala", max_tokens=128)
    assert symbols(chunks) == [
        ("Money", "class", None, 6, 7),
        ("+", "method", "Money", 8, 9),
        ("Money", "object", None, 11, 14),
        ("parse", "method", "Money", 16, 18),
        ("Discount", "trait", None, 20, 21),  # the abstract def is part of the header
        ("describe", "method", "Discount", 23, 24),
        ("Discount", "object", None, 26, 26),
        ("Percent", "class", "Discount", 27, 27),
        ("apply", "method", "Discount.Percent", 28, 29),
        ("NoDiscount", "object", "Discount", 31, 31),
        ("apply", "method", "Discount.NoDiscount", 32, 34),
        ("InvoiceService", "class", None, 36, 36),
        ("total", "method", "InvoiceService", 37, 39),
        ("Currency", "enum", None, 41, 42),  # Scala 3 braceless syntax
        ("symbol", "method", "Currency", 44, 46),
        ("Money", "extension", None, 48, 48),
        ("format", "method", "Money", 49, 49),
    ]


LUA = """
--- Keeps a list of recently opened files.
local Recent = {}
Recent.__index = Recent

local H = {}

--- Default options.
Recent.config = {
  limit = 20,
}

--- Create a list.
---@param opts table|nil
---@return table
function Recent.new(opts)
  local self = setmetatable({}, Recent)
  self.limit = (opts or {}).limit or Recent.config.limit
  self.items = {}
  return self
end

--- Remember that `path` was opened.
function Recent:add(path)
  H.remove(self.items, path)
  table.insert(self.items, 1, path)
  while #self.items > self.limit do
    table.remove(self.items)
  end
end

function Recent:list()
  return vim.deepcopy(self.items)
end

H.remove = function(items, value)
  for i, item in ipairs(items) do
    if item == value then
      return table.remove(items, i)
    end
  end
end

local function normalize(path)
  return vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
end

local on_open = function(args)
  Recent.default:add(normalize(args.file))
end

vim.api.nvim_create_autocmd("BufRead", { callback = on_open })

return Recent
"""


def test_lua():
    chunks = chunks_of(LUA, "lua", "lua/recent.lua", max_tokens=128)
    assert symbols(chunks) == [
        ("new", "method", "Recent", 12, 20),  # `---` doc comments included
        ("add", "method", "Recent", 22, 29),  # Recent:add, like Recent.add
        ("list", "method", "Recent", 31, 33),
        ("remove", "method", "H", 35, 41),  # H.remove = function
        ("normalize", "function", None, 43, 45),
        ("on_open", "function", None, 47, 49),
    ]
    assert [(c.start_line, c.end_line) for c in chunks if c.symbol_name is None] == [(1, 10), (51, 53)]


HASKELL = """
{-# LANGUAGE OverloadedStrings #-}
-- | The stock of a small shop.
module Shop.Inventory
  ( Item (..)
  , Stock
  , restock
  , describe
  ) where

import qualified Data.Map.Strict as Map
import Data.Text (Text)

-- | An item on the shelves.
data Item = Item
  { itemName  :: Text
  , itemPrice :: Int
  } deriving (Show, Eq)

newtype Stock = Stock (Map.Map Text Int)

-- | Things that have a price.
class Priced a where
  price :: a -> Int

  priceWithTax :: a -> Int
  priceWithTax x = price x * 120 `div` 100

instance Priced Item where
  price = itemPrice

instance Semigroup Stock where
  Stock a <> Stock b = Stock (Map.unionWith (+) a b)

-- | Add some items to the stock.
restock :: Text -> Int -> Stock -> Stock
restock name count (Stock m) = Stock (Map.insertWith (+) name count m)

-- | How many are left, in words.
describe :: Int -> Text
describe 0 = "sold out"
describe 1 = "last one"
-- anything more is plenty
describe _ = "in stock"

isEmpty :: Stock -> Bool
isEmpty (Stock m)
  | Map.null m = True
  | otherwise = all (== 0) (Map.elems m)

{-# INLINE (<+>) #-}
(<+>) :: Stock -> Stock -> Stock
(<+>) = (<>)
"""


def test_haskell():
    chunks = chunks_of(HASKELL, "haskell", "src/Shop/Inventory.hs", max_tokens=128)
    assert symbols(chunks) == [
        ("Item", "data", None, 13, 17),
        ("Stock", "newtype", None, 19, 19),
        ("Priced", "class", None, 21, 23),  # with the signature that has no default
        ("priceWithTax", "method", "Priced", 25, 26),
        ("Item", "instance", None, 28, 28),  # named after the instance's type, like a Rust impl
        ("price", "method", "Item", 29, 29),
        ("Stock", "instance", None, 31, 31),
        ("<>", "method", "Stock", 32, 32),
        ("restock", "function", None, 34, 36),  # haddock, signature and equation
        ("describe", "function", None, 38, 43),  # all its equations, the comment between them too
        ("isEmpty", "function", None, 45, 48),
        ("<+>", "function", None, 50, 52),  # the pragma above it included
    ]


ELIXIR = '''
defmodule Shop.Cart do
  @moduledoc """
  A shopping cart held in a process.
  """
  use GenServer

  alias Shop.Item

  defstruct items: %{}, owner: nil

  @doc "Starts a cart for `owner`."
  @spec start_link(String.t()) :: GenServer.on_start()
  def start_link(owner) do
    GenServer.start_link(__MODULE__, owner)
  end

  @doc "The total price of the items, in cents."
  def total(%__MODULE__{items: items}) when map_size(items) == 0, do: 0

  def total(%__MODULE__{items: items}) do
    items |> Map.values() |> Enum.map(&(&1.price * &1.quantity)) |> Enum.sum()
  end

  @impl true
  def init(owner), do: {:ok, %__MODULE__{owner: owner}}

  @impl true
  def handle_call({:add, item}, _from, cart) do
    {:reply, :ok, %{cart | items: Map.put(cart.items, item.sku, validate!(item))}}
  end

  defp validate!(%Item{quantity: quantity} = item) when quantity > 0, do: item

  defmacro with_cart(owner, do: block) do
    quote do
      {:ok, var!(cart)} = unquote(__MODULE__).start_link(unquote(owner))
      unquote(block)
    end
  end

  defmodule Line do
    @moduledoc false
    defstruct [:sku, :quantity]

    def new(sku, quantity \\\\ 1), do: %__MODULE__{sku: sku, quantity: quantity}
  end
end

defprotocol Shop.Priced do
  @doc "The price of a value, in cents."
  def price(value)
end

defimpl Shop.Priced, for: Shop.Item do
  def price(%{price: price, quantity: quantity}), do: price * quantity
end
'''


def test_elixir():
    chunks = chunks_of(ELIXIR, "elixir", "lib/shop/cart.ex", max_tokens=128)
    assert symbols(chunks) == [
        ("Cart", "module", "Shop", 1, 9),
        ("start_link", "function", "Shop.Cart", 11, 15),  # @doc and @spec included
        ("total", "function", "Shop.Cart", 17, 22),  # both clauses
        ("init", "function", "Shop.Cart", 24, 25),
        ("handle_call", "function", "Shop.Cart", 27, 30),
        ("validate!", "function", "Shop.Cart", 32, 32),
        ("with_cart", "function", "Shop.Cart", 34, 39),
        ("Line", "module", "Shop.Cart", 41, 43),
        ("new", "function", "Shop.Cart.Line", 45, 47),
        ("Priced", "protocol", "Shop", 49, 49),
        ("price", "function", "Shop.Priced", 50, 52),
        # Named as the module it compiles to, Shop.Priced.Shop.Item.
        ("Item", "impl", "Shop.Priced.Shop", 54, 54),
        ("price", "method", "Shop.Priced.Shop.Item", 55, 56),
    ]


ZIG = """
const std = @import("std");
const Allocator = std.mem.Allocator;

/// A first-in first-out queue of jobs.
pub const Queue = struct {
    items: std.ArrayListUnmanaged(Job) = .{},
    allocator: Allocator,

    pub const Job = struct {
        id: u32,
        priority: Priority,

        pub fn isUrgent(self: Job) bool {
            return self.priority == .high;
        }
    };

    pub fn init(allocator: Allocator) Queue {
        return .{ .allocator = allocator };
    }

    pub fn deinit(self: *Queue) void {
        self.items.deinit(self.allocator);
    }

    /// Adds a job at the back of the queue.
    pub fn push(self: *Queue, job: Job) !void {
        try self.items.append(self.allocator, job);
    }

    pub fn pop(self: *Queue) ?Job {
        if (self.items.items.len == 0) return null;
        return self.items.orderedRemove(0);
    }
};

pub const Priority = enum(u2) {
    low,
    normal,
    high,

    pub fn label(self: Priority) []const u8 {
        return @tagName(self);
    }
};

pub const Event = union(enum) {
    added: Queue.Job,
    removed: u32,
};

extern fn now() i64;

pub fn main() !void {
    var gpa = std.heap.GeneralPurposeAllocator(.{}){};
    var queue = Queue.init(gpa.allocator());
    defer queue.deinit();
    try queue.push(.{ .id = 1, .priority = .high });
}

test "an empty queue pops nothing" {
    var queue = Queue.init(std.testing.allocator);
    defer queue.deinit();
    try std.testing.expect(queue.pop() == null);
}
"""


def test_zig():
    chunks = chunks_of(ZIG, "zig", "src/queue.zig", max_tokens=128)
    assert symbols(chunks) == [
        ("Queue", "struct", None, 4, 7),
        ("Job", "struct", "Queue", 9, 11),
        ("isUrgent", "method", "Queue.Job", 13, 16),
        ("init", "method", "Queue", 18, 20),
        ("deinit", "method", "Queue", 22, 24),
        ("push", "method", "Queue", 26, 29),
        ("pop", "method", "Queue", 31, 35),
        ("Priority", "enum", None, 37, 40),
        ("label", "method", "Priority", 42, 45),
        ("Event", "union", None, 47, 50),
        ("main", "function", None, 54, 59),
    ]
    # The imports, the body-less extern declaration and the test block.
    assert [(c.start_line, c.end_line) for c in chunks if c.symbol_name is None] == [(1, 2), (52, 52), (61, 65)]


# kotlinx-coroutines' Channel.kt, shortened: the grammar cannot parse a primary constructor on the line after
# its class, and the rest of the file is one error.
KOTLIN_LOST = """
package kotlinx.coroutines.channels

/**
 * A discriminated union representing a channel operation result.
 */
@JvmInline
public value class ChannelResult<out T>
@PublishedApi internal constructor(@PublishedApi internal val holder: Any?) {
    /** Whether the operation succeeded. */
    public val isSuccess: Boolean get() = holder !is Failed

    /** Whether the operation failed. */
    public val isFailure: Boolean get() = holder is Failed

    /** Whether the channel was closed. */
    public val isClosed: Boolean get() = holder is Closed

    /** The value, or null when the operation failed. */
    @Suppress("UNCHECKED_CAST")
    public fun getOrNull(): T? = if (holder !is Failed) holder as T else null

    /** The value, or throws when the operation failed. */
    public fun getOrThrow(): T {
        @Suppress("UNCHECKED_CAST")
        if (holder !is Failed) return holder as T
        if (holder is Closed) throw holder.cause ?: IllegalStateException("closed")
        error("Trying to call 'getOrThrow' on a failed channel result: $holder")
    }

    internal open class Failed {
        override fun toString(): String = "Failed"
    }
}

/**
 * Channel is a non-blocking primitive for communication between a sender and a receiver.
 */
public interface Channel<E> : SendChannel<E>, ReceiveChannel<E> {
    public companion object Factory {
        public const val UNLIMITED: Int = Int.MAX_VALUE
    }
}

/** Creates a channel with the specified buffer capacity. */
public fun <E> Channel(capacity: Int = 0): Channel<E> = BufferedChannel(capacity)
"""


def test_definitions_after_a_stretch_the_grammar_cannot_parse_are_found_by_parsing_again():
    chunks = chunks_of(KOTLIN_LOST, "kotlin", "channels/Channel.kt", max_tokens=128)
    named = symbols(chunks)
    assert named[1:] == [
        ("Channel", "interface", None, 35, 38),  # with its doc comment
        ("Factory", "object", "Channel", 39, 42),
        ("Channel", "function", None, 44, 45),
    ]
    assert named[0][:2] == ("ChannelResult", "class")  # before the lost stretch, as the first pass found it


def test_unparsable_source_still_covers_every_line():
    source = "def broken(:\n    return (]\n\nclass {\n  fn x( -> \n}\n\n" + "@@@ ??? !!!\n" * 50
    chunks_of(source, "python", max_tokens=32)
    chunks_of(source, "cpp", max_tokens=32)


def test_grammar_that_fails_to_load_falls_back_to_line_windows(monkeypatch):
    # As if the grammar wheel were missing: the file is still chunked, only without symbols.
    monkeypatch.setitem(syntax._GRAMMARS, "python", replace(syntax._GRAMMARS["python"], module="no_such_wheel"))
    syntax._load.cache_clear()
    try:
        chunks = chunks_of(PYTHON, "python", "shapes.py", max_tokens=64)
    finally:
        monkeypatch.undo()
        syntax._load.cache_clear()
    assert {c.chunk_type for c in chunks} == {"code"} and symbols(chunks) == []
    assert len(chunks) > 1


# ---- docs, config and the rest ---------------------------------------------------------------------

MARKDOWN = """
Quarry searches your code.

# Quarry

Offline code search.

## Install

Run the installer:

```bash
# not a heading
./install.sh
```

### From source

Clone and build.

Usage
-----

Type a query.
"""


def test_markdown_headings():
    chunks = chunks_of(MARKDOWN, "markdown", "README.md")
    assert [(c.symbol_name, c.symbol_type, c.parent_symbol, c.start_line, c.end_line) for c in chunks] == [
        (None, None, None, 1, 1),
        ("Quarry", "heading", None, 3, 5),
        ("Install", "heading", "Quarry", 7, 14),  # the "#" line in the code fence is no heading
        ("From source", "heading", "Install", 16, 18),
        ("Usage", "heading", "Quarry", 20, 23),  # an underlined heading
    ]
    assert {c.chunk_type for c in chunks} == {"prose"}


def test_long_markdown_section_is_split_and_keeps_its_heading():
    paragraphs = "\n\n".join(f"Paragraph {i} explains another detail of the indexing pipeline." for i in range(40))
    chunks = chunks_of(f"# Guide\n\n## Indexing\n\n{paragraphs}\n", "markdown", "docs/guide.md", max_tokens=64)
    indexing = [c for c in chunks if c.symbol_name == "Indexing"]
    assert len(indexing) > 3
    assert all(c.parent_symbol == "Guide" and c.token_count <= 64 for c in indexing)


def test_yaml_top_level_keys():
    services = "\n".join(f"  service{i}:\n    image: registry.example.com/team/service{i}:latest" for i in range(30))
    source = (
        f"version: '3.9'\n\n# Shared settings.\nx-defaults: &defaults\n  restart: always\n\n"
        f"services:\n{services}\n\nvolumes:\n  data: {{}}\n"
    )
    chunks = chunks_of(source, "yaml", "compose.yaml", max_tokens=96)
    assert {c.chunk_type for c in chunks} == {"config"}
    named = [(c.symbol_name, c.symbol_type, c.start_line, c.end_line) for c in chunks if c.symbol_name]
    assert named == [
        ("version", "key", 1, 5),  # small keys are packed, the comment above x-defaults included
        ("services", "key", 7, 18),  # too big: its first window carries the name, the rest none
        ("volumes", "key", 69, 70),
    ]
    assert [(c.start_line, c.end_line) for c in chunks if not c.symbol_name][-1] == (64, 67)


def test_toml_sections_start_chunks():
    dependencies = "\n".join(f'package-number-{i} = ">={i}.0"' for i in range(40))
    source = (
        f'title = "demo"\n\n[project]\nname = "demo"\nversion = "1.0"\n\n'
        f"# Runtime dependencies.\n[dependencies]\n{dependencies}\n\n[tool.ruff]\nline-length = 110\n"
    )
    chunks = chunks_of(source, "toml", "pyproject.toml", max_tokens=64)
    named = [(c.symbol_name, c.symbol_type, c.start_line, c.end_line) for c in chunks if c.symbol_name]
    # Keys inside a section ("name", "version", ...) are not top-level.
    assert named == [
        ("title", "key", 1, 1),
        ("project", "section", 3, 5),
        ("dependencies", "section", 7, 12),
        ("tool.ruff", "section", 50, 51),
    ]


def test_ini_sections():
    source = "; global\nverbose = true\n\n[server]\nport = 8080\n\n[client]\nretries = 3\n"
    chunks = chunks_of(source, "ini", "app.ini")
    assert [(c.symbol_name, c.start_line, c.end_line) for c in chunks] == [
        ("verbose", 1, 2),
        ("server", 4, 5),
        ("client", 7, 8),
    ]


def test_plain_config_and_prose_and_unknown_languages_use_line_windows():
    json_text = "{\n" + ",\n".join(f'  "key{i}": "value number {i}"' for i in range(80)) + "\n}\n"
    json_chunks = chunks_of(json_text, "json", "data.json", max_tokens=64)
    assert len(json_chunks) > 3 and {c.chunk_type for c in json_chunks} == {"config"}
    text = "\n\n".join(f"Line {i} of the release notes, describing a fix." for i in range(60))
    assert {c.chunk_type for c in chunks_of(text, "text", "NOTES.txt", max_tokens=64)} == {"prose"}
    perl = "\n".join(f"my $value_{i} = compute({i}) + $offset;" for i in range(100))
    perl_chunks = chunks_of(perl, "perl", "lib/values.pl", max_tokens=64, overlap_tokens=16)
    assert {c.chunk_type for c in perl_chunks} == {"code"}
    assert all(c.symbol_name is None for c in perl_chunks)
    assert all(b.start_line <= a.end_line for a, b in zip(perl_chunks, perl_chunks[1:], strict=False))


def test_oversized_single_line_is_its_own_chunk():
    source = "x = 1\n" + "y = [" + ", ".join(str(i) for i in range(400)) + "]\nz = 2\n"
    chunks = chunks_of(source, "python", max_tokens=64)
    assert [(c.start_line, c.end_line) for c in chunks if c.token_count > 64] == [(2, 2)]


# ---- invariants on arbitrary and real files --------------------------------------------------------

_CODE_LINES = [
    "def f(x):",
    "    return x",
    "class A:",
    "    pass",
    "}",
    "function g() {",
    "# Title",
    "## Part",
    "key: value",
    "  nested: 1",
    "[section]",
    "```",
    "-----",
    "end",
]
_line = st.one_of(
    st.just(""),
    st.sampled_from(_CODE_LINES),
    st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=60),
    st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), min_size=300, max_size=900),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(_line, max_size=60),
    language=st.sampled_from(
        ["python", "javascript", "rust", "markdown", "yaml", "toml", "text", "lua", "haskell", "scala"]
    ),
    max_tokens=st.sampled_from([8, 32, 128]),
    overlap_tokens=st.sampled_from([0, 4, 32]),
)
def test_invariants_hold_for_arbitrary_text(lines, language, max_tokens, overlap_tokens):
    text = "\n".join(lines)
    chunks = chunk_file(text, language, "f", count_tokens, max_tokens, overlap_tokens)
    check_invariants(text, chunks, max_tokens)


STDLIB = [
    path
    for directory in ("/usr/lib/python3.11/json", "/usr/lib/python3.11/email")
    for path in sorted(Path(directory).rglob("*.py"))
]


@pytest.mark.skipif(not STDLIB, reason="no Python 3.11 standard library sources here")
def test_invariants_hold_on_standard_library_sources():
    for path in STDLIB:
        text = path.read_text(encoding="utf-8")
        chunks = chunk_file(text, "python", str(path), count_tokens)
        check_invariants(text, chunks, 256)
        # Every top-level definition is the symbol of the chunk it starts in.
        for row, line in enumerate(text.split("\n"), 1):
            if match := re.match(r"(?:def|class) (\w+)", line):
                assert any(c.symbol_name == match.group(1) and c.start_line <= row <= c.end_line for c in chunks), (
                    path,
                    row,
                )


def test_large_file_is_chunked_whole():
    unit = textwrap.dedent('''
        class Handler{0}(Base):
            """Handles requests of kind {0}."""

            def handle(self, request):
                if request.kind != {0}:
                    return None
                return self.respond(request, status=200)


        def helper_{0}(value):
            return value * {0}

        ''')
    text = "".join(unit.format(i) for i in range(2500))
    assert len(text) > 500_000
    lines = text.split("\n")
    counts = dict(zip(lines, count_tokens(lines), strict=True))  # counted before: the chunker's own time is timed
    start = time.perf_counter()
    chunks = chunk_file(text, "python", "big.py", lambda strings: [counts[s] for s in strings])
    print(f"chunked {len(text) // 1000} KB in {time.perf_counter() - start:.3f}s")  # a figure, not a gate
    assert len(chunks) == 7500  # per unit: the class header, its method, the helper


def test_a_parse_process_parses_whole_texts_and_finds_what_a_yielding_parse_finds(monkeypatch):
    # The parse processes give the parser the whole text (parse_pool: syntax.parse_without_yielding); a parse on a
    # thread another waits on reads it in pieces through a callback. Both must see the same definitions, on files
    # larger than one piece (16 KB) and with a stretch the parser loses its way in (the re-parse from there).
    stdlib = Path(textwrap.__file__).parent
    files = [(stdlib / "argparse.py", "python"), (stdlib / "email" / "_header_value_parser.py", "python")]
    lost = ("// " + "x" * 60 + "\n") * 300 + KOTLIN_LOST
    texts = [(p.read_text(encoding="utf-8"), lang, p.name) for p, lang in files] + [(lost, "kotlin", "Channel.kt")]
    assert all(len(t.encode()) > 16384 for t, _, _ in texts)
    kotlin = syntax._load("kotlin")
    assert kotlin is not None and syntax._first_lost_stretch(Parser(kotlin).parse(lost.encode()).root_node)
    monkeypatch.setattr(syntax, "_yield_while_parsing", True)  # put back after the test
    yielding = [syntax.outline(*t) for t in texts]
    syntax.parse_without_yielding()
    assert syntax._yield_while_parsing is False
    assert [syntax.outline(*t) for t in texts] == yielding
    assert all(o is not None and o.definitions for o in yielding)
