"""A small mixed-language repository, like one a user would point Quarry at."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

PY_HTTP = '''"""HTTP helpers for talking to the billing service."""

import random
import time

import requests


class RetryPolicy:
    """How many times to retry and how long to wait between attempts."""

    def __init__(self, attempts=5, base_delay=0.5):
        self.attempts = attempts
        self.base_delay = base_delay

    def delay_for(self, attempt):
        # exponential backoff with jitter so clients do not retry in lockstep
        return self.base_delay * (2 ** attempt) + random.uniform(0, 0.1)


def fetch_with_retry(url, policy=None, timeout=10):
    policy = policy or RetryPolicy()
    last_error = None
    for attempt in range(policy.attempts):
        try:
            response = requests.get(url, timeout=timeout)
            if response.status_code >= 500:
                raise ConnectionError(f"server error {response.status_code}")
            return response
        except (ConnectionError, requests.Timeout) as exc:
            last_error = exc
            time.sleep(policy.delay_for(attempt))
    raise RuntimeError(f"giving up on {url} after {policy.attempts} attempts") from last_error


def parse_invoice_total(payload):
    lines = payload.get("lines", [])
    return sum(item["quantity"] * item["unit_price"] for item in lines)
'''

PY_CACHE = """from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self._data = OrderedDict()

    def get(self, key):
        if key not in self._data:
            return None
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key, value):
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.capacity:
            # evict the least recently used entry
            self._data.popitem(last=False)
"""

RUST_CLI = """use std::env;
use std::process;

/// Command-line options for the converter.
pub struct Options {
    pub input: String,
    pub output: Option<String>,
    pub verbose: bool,
}

/// Parse command line arguments into Options, exiting with a usage message on error.
pub fn parse_args(args: &[String]) -> Options {
    let mut input = None;
    let mut output = None;
    let mut verbose = false;
    let mut iter = args.iter().skip(1);
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-o" | "--output" => output = iter.next().cloned(),
            "-v" | "--verbose" => verbose = true,
            other => input = Some(other.to_string()),
        }
    }
    match input {
        Some(input) => Options { input, output, verbose },
        None => {
            eprintln!("usage: convert INPUT [-o OUTPUT] [-v]");
            process::exit(2);
        }
    }
}

fn main() {
    let args: Vec<String> = env::args().collect();
    let options = parse_args(&args);
    if options.verbose {
        println!("converting {}", options.input);
    }
}
"""

RUST_MATRIX = """/// A dense matrix of f64 values stored row by row.
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix { rows, cols, data: vec![0.0; rows * cols] }
    }

    /// Multiply two matrices; panics when the inner dimensions differ.
    pub fn multiply(&self, other: &Matrix) -> Matrix {
        assert_eq!(self.cols, other.rows, "dimension mismatch");
        let mut out = Matrix::zeros(self.rows, other.cols);
        for i in 0..self.rows {
            for k in 0..self.cols {
                let a = self.data[i * self.cols + k];
                for j in 0..other.cols {
                    out.data[i * other.cols + j] += a * other.data[k * other.cols + j];
                }
            }
        }
        out
    }

    pub fn transpose(&self) -> Matrix {
        let mut out = Matrix::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                out.data[j * self.rows + i] = self.data[i * self.cols + j];
            }
        }
        out
    }
}
"""

TS_DEBOUNCE = """export function debounce<T extends (...args: any[]) => void>(fn: T, waitMs: number): T {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return ((...args: any[]) => {
    if (timer !== undefined) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => fn(...args), waitMs);
  }) as T;
}

export class SearchBox {
  private listeners: Array<(query: string) => void> = [];

  constructor(private readonly input: HTMLInputElement) {
    input.addEventListener("input", debounce(() => this.emit(input.value), 150));
  }

  onQuery(listener: (query: string) => void): void {
    this.listeners.push(listener);
  }

  private emit(query: string): void {
    for (const listener of this.listeners) {
      listener(query);
    }
  }
}
"""

TS_AUTH = """export interface Session {
  userId: string;
  expiresAt: number;
}

export async function refreshAccessToken(refreshToken: string): Promise<Session> {
  const response = await fetch("/api/token/refresh", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ refreshToken }),
  });
  if (!response.ok) {
    throw new Error(`token refresh failed with status ${response.status}`);
  }
  return (await response.json()) as Session;
}
"""

README = """# Billing tools

A set of small utilities used by the billing team.

## Installation

Run `pip install -r requirements.txt` and copy `config.example.toml` to `config.toml`.

## Deployment

Deploy to the staging cluster with `make deploy-staging`; production deploys need a second reviewer
and run from the release branch only.
"""

LATIN1 = (
    "# Fichier de configuration écrit par un éditeur ancien\n"
    "def calculer_moyenne(valeurs):\n    # moyenne arithmétique des valeurs données\n"
    "    return sum(valeurs) / len(valeurs)\n"
)


def _png() -> bytes:
    raw = b"\x00\xff\x00\x00" * 4

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


# Paths (relative) that must end up indexed, and the ones that must not.
INDEXED = {
    "src/http_client.py",
    "src/cache.py",
    "src/legacy_latin1.py",
    "cli/src/main.rs",
    "cli/src/matrix.rs",
    "web/debounce.ts",
    "web/auth.ts",
    "README.md",
    ".gitignore",  # text a developer searches too (issue 34 item 1)
}


def build(root: Path) -> Path:
    files = {
        "src/http_client.py": PY_HTTP,
        "src/cache.py": PY_CACHE,
        "cli/src/main.rs": RUST_CLI,
        "cli/src/matrix.rs": RUST_MATRIX,
        "web/debounce.ts": TS_DEBOUNCE,
        "web/auth.ts": TS_AUTH,
        "README.md": README,
        ".gitignore": "build/\n*.log\n",
        "build/generated.py": "def generated():\n    return 1\n",
        "debug.log": "nothing to see\n",
        "node_modules/left-pad/index.js": "module.exports = function leftPad() {}\n",
        "web/package-lock.json": '{"lockfileVersion": 3}\n',
        "cli/Cargo.lock": "# lock\n",
        "data/big_table.py": "TABLE = [\n" + "    0,\n" * 180_000 + "]\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "assets").mkdir(exist_ok=True)
    (root / "assets" / "logo.png").write_bytes(_png())
    (root / "src" / "legacy_latin1.py").write_bytes(LATIN1.encode("latin-1"))
    return root
