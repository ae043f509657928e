"""The three registries this machine reaches, through their own clients and by package name only: Debian
(apt-cache, apt-get download), npm (npm view, npm pack), PyPI (pip download of the sdist).

`resolve` pins a named package: its current version, its archive's sha256, its licence. `download` brings
exactly a pinned version back into the cache's archives/ folder and checks its sha256.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .archives import members, sha256_of
from .licences import debian_licences, npm_licence, pypi_licence

REGISTRIES = ("debian", "npm", "pypi")


class RegistryError(Exception):
    """A registry could not give the package asked for (no such package or version, no network)."""


@dataclass
class Package:
    registry: str
    name: str
    version: str
    sha256: str
    archive: str  # the archive's file name under archives/REGISTRY/
    licence: str
    licences: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    source: str = ""  # Debian's source package: several binary packages may share an upstream

    @property
    def key(self) -> str:
        """The package's folder in the corpus: its name, made safe as one path segment."""
        return self.name.replace("/", "__").replace("@", "")


def _run(args: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RegistryError(f"{args[0]} failed: {error}") from error
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise RegistryError(f"{' '.join(args[:3])} ... exited {done.returncode}: {last[0]}")
    return done.stdout


def _single_new_file(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise RegistryError(f"expected one {pattern} in {folder}, found {[p.name for p in found]}")
    return found[0]


def _store(downloaded: Path, archives: Path, expected_sha256: str | None) -> tuple[Path, str]:
    digest = sha256_of(downloaded)
    if expected_sha256 and digest != expected_sha256:
        raise RegistryError(f"{downloaded.name}: sha256 {digest}, the manifest records {expected_sha256}")
    archives.mkdir(parents=True, exist_ok=True)
    target = archives / downloaded.name
    downloaded.replace(target)
    return target, digest


# Debian -------------------------------------------------------------------------------------------------


def _apt_fields(name: str, version: str | None) -> dict[str, str]:
    spec = f"{name}={version}" if version else name
    text = _run(["apt-cache", "show", "--no-all-versions", spec])
    fields = dict(re.findall(r"^([A-Za-z0-9-]+):[ \t]*(.*)$", text.split("\n\n", 1)[0], re.MULTILINE))
    if "Version" not in fields:
        raise RegistryError(f"apt knows no {spec}")
    return fields


def _debian_download(name: str, version: str, archives: Path, expected_sha256: str | None) -> tuple[Path, str]:
    with tempfile.TemporaryDirectory(prefix="quarry-apt-") as tmp:
        Path(tmp).chmod(0o777)  # apt downloads as its own _apt user where it can
        _run(["apt-get", "download", "-q", f"{name}={version}"], cwd=Path(tmp))
        return _store(_single_new_file(Path(tmp), "*.deb"), archives, expected_sha256)


def _debian_resolve(name: str, version: str | None, archives: Path, known: Package | None) -> Package:
    fields = _apt_fields(name, version)
    cached = archives / Path(fields.get("Filename", "")).name
    if fields.get("SHA256") and cached.is_file() and sha256_of(cached) == fields["SHA256"]:
        path, digest = cached, fields["SHA256"]
    else:
        path, digest = _debian_download(name, fields["Version"], archives, fields.get("SHA256"))
    # A -dev package often links its doc folder to its library's: then any copyright file it has will do.
    copyrights = {
        member: data.decode("utf-8", errors="replace")
        for member, data in members(path, lambda m, _size: bool(re.search(r"usr/share/doc/[^/]+/copyright$", m)))
    }
    own = next((text for member, text in copyrights.items() if f"/doc/{name}/" in member), None)
    licence, licences = debian_licences(own or next(iter(copyrights.values()), ""))
    source = fields.get("Source", name).split(" ")[0]
    return Package("debian", name, fields["Version"], digest, path.name, licence, licences, source=source)


# npm ----------------------------------------------------------------------------------------------------


def _npm_download(name: str, version: str, archives: Path, expected_sha256: str | None) -> tuple[Path, str]:
    with tempfile.TemporaryDirectory(prefix="quarry-npm-") as tmp:
        # --ignore-scripts: packing a registry tarball must run none of its code.
        _run(["npm", "pack", f"{name}@{version}", "--ignore-scripts", "--pack-destination", tmp], cwd=Path(tmp))
        return _store(_single_new_file(Path(tmp), "*.tgz"), archives, expected_sha256)


def _npm_resolve(name: str, version: str | None, archives: Path, known: Package | None) -> Package:
    meta = json.loads(_run(["npm", "view", f"{name}@{version or 'latest'}", "version", "license", "--json"]))
    if isinstance(meta, list):  # a range matched several versions: the newest is last
        meta = meta[-1]
    licence = npm_licence(meta.get("license"))
    if known is not None and known.version == meta["version"]:
        path = download(known, archives.parent)
        return Package("npm", name, known.version, known.sha256, path.name, licence, [licence])
    path, digest = _npm_download(name, meta["version"], archives, None)
    return Package("npm", name, meta["version"], digest, path.name, licence, [licence])


# PyPI ---------------------------------------------------------------------------------------------------


def _pypi_download(name: str, version: str | None, archives: Path, expected_sha256: str | None) -> tuple[Path, str]:
    spec = f"{name}=={version}" if version else name
    with tempfile.TemporaryDirectory(prefix="quarry-pip-") as tmp:
        # The sdist only; pip prepares its metadata, in an isolated build environment, to check it.
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", tmp, spec])
        return _store(_single_new_file(Path(tmp), "*.*"), archives, expected_sha256)


def _pypi_latest(name: str) -> str:
    # `pip index versions` names the newest release without building anything (pip download would).
    found = re.search(r"\(([^)]+)\)", _run([sys.executable, "-m", "pip", "index", "versions", name]))
    if not found:
        raise RegistryError(f"pip found no release of {name}")
    return found.group(1)


def _pypi_resolve(name: str, version: str | None, archives: Path, known: Package | None) -> Package:
    version = version or _pypi_latest(name)
    if known is not None and known.version == version:
        path, digest = download(known, archives.parent), known.sha256
    else:
        path, digest = _pypi_download(name, version, archives, None)
    pkg_info = ""
    for _member, data in members(path, lambda m, _size: m.count("/") == 1 and m.endswith("/PKG-INFO")):
        pkg_info = data.decode("utf-8", errors="replace")
    found = re.search(r"^Version:\s*(\S+)", pkg_info, re.MULTILINE)
    if not found:
        raise RegistryError(f"{path.name} has no PKG-INFO with a version")
    licence = pypi_licence(pkg_info)
    return Package("pypi", name, found.group(1), digest, path.name, licence, [licence])


# Both ways in -------------------------------------------------------------------------------------------


def resolve(registry: str, name: str, version: str | None, archives: Path, known: Package | None = None) -> Package:
    """The package as its registry has it now (or at `version`), its archive in `archives`: downloaded, or
    reused when `known` (the manifest's entry) already pins that version."""
    folder = archives / registry
    if registry == "debian":
        return _debian_resolve(name, version, folder, known)
    if registry == "npm":
        return _npm_resolve(name, version, folder, known)
    if registry == "pypi":
        return _pypi_resolve(name, version, folder, known)
    raise RegistryError(f"unknown registry {registry!r} (known: {', '.join(REGISTRIES)})")


def download(package: Package, archives: Path) -> Path:
    """The package's archive in `archives`, fetched unless a copy with the recorded sha256 is there."""
    folder = archives / package.registry
    cached = folder / package.archive
    if cached.is_file() and sha256_of(cached) == package.sha256:
        return cached
    if package.registry == "debian":
        path, _ = _debian_download(package.name, package.version, folder, package.sha256)
    elif package.registry == "npm":
        path, _ = _npm_download(package.name, package.version, folder, package.sha256)
    elif package.registry == "pypi":
        path, _ = _pypi_download(package.name, package.version, folder, package.sha256)
    else:
        raise RegistryError(f"unknown registry {package.registry!r}")
    return path
