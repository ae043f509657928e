"""Reading the files out of a downloaded package without unpacking it to disk: a Debian .deb (an ar archive
around a tar), an npm tarball, a PyPI sdist (.tar.gz or, for old ones, .zip)."""

from __future__ import annotations

import hashlib
import subprocess
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

Wanted = Callable[[str, int], bool]  # (member path, size) -> read it?

_AR_MAGIC = b"!<arch>\n"
_TAR_MODES = {".xz": "r|xz", ".gz": "r|gz", ".bz2": "r|bz2", ".tar": "r|"}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def members(archive: Path, wanted: Wanted) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of each regular file in `archive` that `wanted` asks for, in archive order."""
    name = archive.name
    if name.endswith(".deb"):
        yield from _deb_members(archive, wanted)
    elif name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if not info.is_dir() and wanted(info.filename, info.file_size):
                    yield info.filename, zf.read(info)
    else:
        with open(archive, "rb") as handle:
            yield from _tar_members(handle, "r|*", wanted)


def _tar_members(stream: IO[bytes], mode: str, wanted: Wanted) -> Iterator[tuple[str, bytes]]:
    # Streaming mode: one pass, nothing seeks, so a pipe or a slice of an ar archive will do.
    with tarfile.open(fileobj=stream, mode=mode) as tar:  # type: ignore[call-overload]
        for member in tar:
            if member.isfile() and wanted(member.name, member.size):
                extracted = tar.extractfile(member)
                if extracted is not None:
                    yield member.name, extracted.read()


def _deb_members(archive: Path, wanted: Wanted) -> Iterator[tuple[str, bytes]]:
    """A .deb's data.tar, read in Python where its compression allows (xz, gzip: no dpkg needed) and through
    dpkg-deb otherwise (zstd)."""
    with open(archive, "rb") as handle:
        if handle.read(8) != _AR_MAGIC:
            raise ValueError(f"{archive.name} is not a Debian package")
        while header := handle.read(60):
            member = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58].decode().strip())
            if member.startswith("data.tar"):
                mode = _TAR_MODES.get(Path(member).suffix)
                if mode is None:
                    break
                yield from _tar_members(handle, mode, wanted)
                return
            handle.seek(size + size % 2, 1)  # members are padded to an even size
    with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(archive)], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        yield from _tar_members(proc.stdout, "r|", wanted)
