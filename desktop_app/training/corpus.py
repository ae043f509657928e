"""The training corpus: public source packages listed by hand, pinned in a committed manifest, fetched into a
cache outside the repository.

    python -m desktop_app.training.corpus fetch --cache ~/.cache/quarry-training
        downloads exactly the manifest's versions, checks each archive's sha256, keeps each package's own
        source (selection.py), drops excluded projects (exclusions.py) and files already seen elsewhere in
        the corpus (same sha256, the first package in manifest order keeps it), and writes
        CACHE/files/REGISTRY/PACKAGE/..., CACHE/index.jsonl (one file a line: path relative to CACHE,
        rel_path inside its package, language, sha256, bytes, registry, package, version),
        CACHE/dropped.jsonl (every file left out, with why) and CACHE/report.json (sizes per language and
        package, refusals, failures).

    python -m desktop_app.training.corpus refresh --cache ~/.cache/quarry-training
        re-pins the manifest from the hand-written list (corpus_packages.txt): each named package's current
        version (or the one the list pins), its archive's sha256, its licence and the languages its kept
        files are in. A package the exclusions or the licence rule refuse is recorded as refused, with why.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path

from .archives import members
from .exclusions import ExclusionList
from .licences import is_permissive
from .registries import REGISTRIES, Package, RegistryError, download, resolve
from .selection import Selection, select_files, wanted

HERE = Path(__file__).resolve().parent
DEFAULT_MANIFEST = HERE / "corpus_manifest.json"
DEFAULT_NAMES = HERE / "corpus_packages.txt"
# shared/ sits beside the repository (CI lays a copy there too).
DEFAULT_EXCLUSIONS = HERE.parents[2] / "shared" / "eval" / "training-exclusions.txt"
DEFAULT_CACHE = Path("~/.cache/quarry-training")
LANGUAGE_SHARE = 0.05  # a package is listed under each language holding at least this share of its bytes


# The hand-written list ----------------------------------------------------------------------------------


def read_names(path: Path) -> tuple[str, list[tuple[str, str, str | None, str]]]:
    """The rule (the list's opening comment) and its entries: (registry, name, pinned version or None, the
    language section it was chosen for)."""
    rule: list[str] = []
    entries = []
    section = ""
    in_header = True
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if raw.startswith("#") and in_header:
            rule.append(raw.lstrip("# ").rstrip())
            continue
        in_header = False
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        registry, _, spec = line.partition(" ")
        name, _, version = spec.strip().partition("==")
        if registry not in REGISTRIES or not name:
            raise ValueError(f"{path.name}: {raw!r} is not 'REGISTRY NAME[==VERSION]' ({', '.join(REGISTRIES)})")
        entries.append((registry, name, version or None, section))
    return " ".join(line for line in rule if line).strip(), entries


# The manifest -------------------------------------------------------------------------------------------


def read_manifest(path: Path) -> tuple[dict, list[Package]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data, [Package(**entry) for entry in data["packages"]]


def write_manifest(path: Path, rule: str, exclusions: ExclusionList, packages: list[Package], refused: list) -> None:
    data = {
        "rule": rule,
        "exclusions_sha256": exclusions.sha256,
        "packages": [asdict(p) for p in packages],
        "refused": refused,
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def refusal(registry: str, name: str, source: str, exclusions: ExclusionList) -> str | None:
    """Why a package may not be in the corpus at all, or None."""
    for candidate in dict.fromkeys(n for n in (name, source) if n):
        entry = exclusions.match_name(candidate)
        if entry is not None:
            return f"packages {entry.name} ({entry.upstream}), which training-exclusions.txt lists"
    module = name.removeprefix("python3-") if registry == "debian" else name
    if (registry == "pypi" or name.startswith("python3-")) and exclusions.is_stdlib_module(module):
        return "a backport of CPython's standard library, which training-exclusions.txt lists"
    return None


def _select(package: Package, archive: Path, exclusions: ExclusionList) -> Selection:
    return select_files(
        members(archive, lambda m, size: wanted(m, size, package.registry)), package.registry, exclusions
    )


def refresh(names: Path, manifest: Path, cache: Path, exclusions: ExclusionList) -> int:
    rule, entries = read_names(names)
    known = {}
    if manifest.exists():
        known = {(p.registry, p.name): p for p in read_manifest(manifest)[1]}
    packages: list[Package] = []
    refused: list[dict] = []
    failed = 0
    for registry, name, version, section in entries:
        why = refusal(registry, name, "", exclusions)
        try:
            if why is None:
                package = resolve(registry, name, version, cache / "archives", known.get((registry, name)))
                why = refusal(registry, name, package.source, exclusions) or _licence_refusal(package)
            if why is None:
                why = _measure(package, cache / "archives", exclusions)
        except RegistryError as error:
            print(f"{registry} {name}: {error}", file=sys.stderr)
            failed += 1
            continue
        if why is not None:
            refused.append({"registry": registry, "name": name, "chosen_for": section, "reason": why})
            print(f"{registry} {name}: refused, {why}", file=sys.stderr)
            continue
        packages.append(package)
        print(
            f"{registry} {name} {package.version} ({package.licence}): {', '.join(package.languages)}", file=sys.stderr
        )
    write_manifest(manifest, rule, exclusions, packages, refused)
    print(f"{manifest}: {len(packages)} packages, {len(refused)} refused, {failed} not found", file=sys.stderr)
    return 1 if failed else 0


def _licence_refusal(package: Package) -> str | None:
    if is_permissive(package.licence):
        return None
    return f"its licence ({package.licence}) is not a permissive or weak-copyleft one"


def _measure(package: Package, archives: Path, exclusions: ExclusionList) -> str | None:
    """Records the languages the package's kept files are in; why it is refused if it keeps nothing."""
    selection = _select(package, archives / package.registry / package.archive, exclusions)
    sizes: Counter[str] = Counter()
    for kept in selection.kept:
        sizes[kept.language] += len(kept.data)
    total = sum(sizes.values())
    if not total:
        excluded = next((d.reason for d in selection.dropped if d.reason.startswith("excluded")), None)
        if excluded or not selection.dropped:
            return excluded or "it ships no source that Quarry indexes as code"
        reasons = Counter(d.reason for d in selection.dropped).most_common()
        return "none of its code is kept: " + ", ".join(f"{n} {reason}" for reason, n in reasons)
    package.languages = [lang for lang, size in sizes.most_common() if size >= LANGUAGE_SHARE * total]
    return None


# Fetching -----------------------------------------------------------------------------------------------


def fetch(manifest: Path, cache: Path, exclusions: ExclusionList) -> int:
    _, packages = read_manifest(manifest)
    staging = cache / "files.new"
    shutil.rmtree(staging, ignore_errors=True)
    seen: dict[str, str] = {}  # sha256 -> the path that keeps it
    index: list[dict] = []
    dropped: list[dict] = []
    report: dict = {
        "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(),
        "exclusions_sha256": exclusions.sha256,
        "packages": [],
        "refused": [],
        "failed": [],
    }
    for package in packages:
        # Checked again here: a manifest edited by hand goes through the same rule as one `refresh` wrote.
        why = refusal(package.registry, package.name, package.source, exclusions) or _licence_refusal(package)
        if why is not None:
            report["refused"].append({"registry": package.registry, "name": package.name, "reason": why})
            print(f"{package.registry} {package.name}: refused, {why}", file=sys.stderr)
            continue
        try:
            archive = download(package, cache / "archives")
            selection = _select(package, archive, exclusions)
        except (RegistryError, OSError, ValueError) as error:
            report["failed"].append({"registry": package.registry, "name": package.name, "error": str(error)})
            print(f"{package.registry} {package.name}: failed, {error}", file=sys.stderr)
            continue
        files, size = 0, 0
        for d in selection.dropped:
            dropped.append({"registry": package.registry, "package": package.name, **asdict(d)})
        for kept in selection.kept:
            path = f"files/{package.registry}/{package.key}/{kept.rel_path}"
            if kept.sha256 in seen:
                dropped.append(_record(package, kept.rel_path, f"duplicate of {seen[kept.sha256]}"))
                continue
            seen[kept.sha256] = path
            target = staging / path.removeprefix("files/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(kept.data)
            files, size = files + 1, size + len(kept.data)
            index.append(
                {
                    "path": path,
                    "rel_path": kept.rel_path,
                    "language": kept.language,
                    "sha256": kept.sha256,
                    "bytes": len(kept.data),
                    "registry": package.registry,
                    "package": package.name,
                    "version": package.version,
                }
            )
        report["packages"].append(
            {
                "registry": package.registry,
                "name": package.name,
                "version": package.version,
                "files": files,
                "bytes": size,
            }
        )
        print(
            f"{package.registry} {package.name} {package.version}: {files} files, {size / 1e6:.1f} MB", file=sys.stderr
        )
    report["languages"] = _per_language(index)
    reasons = Counter(
        d["reason"] if d["reason"].startswith("excluded") else d["reason"].split(" of ")[0] for d in dropped
    )
    report["dropped"] = dict(reasons.most_common())
    _publish(cache, staging, index, dropped, report)
    print(_summary(report), file=sys.stderr)
    return 1 if report["failed"] else 0


def _record(package: Package, rel_path: str, reason: str) -> dict:
    return {"registry": package.registry, "package": package.name, "rel_path": rel_path, "reason": reason}


def _per_language(index: list[dict]) -> dict:
    sizes: dict[str, dict] = defaultdict(lambda: {"files": 0, "bytes": 0, "packages": set()})
    for entry in index:
        lang = sizes[entry["language"]]
        lang["files"] += 1
        lang["bytes"] += entry["bytes"]
        lang["packages"].add(entry["package"])
    ordered = sorted(sizes.items(), key=lambda item: -item[1]["bytes"])
    return {name: {**lang, "packages": len(lang["packages"])} for name, lang in ordered}


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def _publish(cache: Path, staging: Path, index: list[dict], dropped: list[dict], report: dict) -> None:
    """Swaps the new corpus in whole, so a reader never sees half of one and half of another."""
    staging.mkdir(parents=True, exist_ok=True)
    _write_jsonl(cache / "index.jsonl.new", index)
    _write_jsonl(cache / "dropped.jsonl", dropped)
    (cache / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    old = cache / "files.old"
    shutil.rmtree(old, ignore_errors=True)
    if (cache / "files").exists():
        (cache / "files").rename(old)
    staging.rename(cache / "files")
    (cache / "index.jsonl.new").replace(cache / "index.jsonl")
    shutil.rmtree(old, ignore_errors=True)


def _summary(report: dict) -> str:
    lines = [f"{'language':<12} {'files':>8} {'MB':>8} {'packages':>9}"]
    for name, lang in report["languages"].items():
        lines.append(f"{name:<12} {lang['files']:>8} {lang['bytes'] / 1e6:>8.1f} {lang['packages']:>9}")
    total = sum(lang["bytes"] for lang in report["languages"].values())
    lines.append(f"total {total / 1e6:.1f} MB; {len(report['refused'])} refused, {len(report['failed'])} failed")
    return "\n".join(lines)


# Command line -------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m desktop_app.training.corpus", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("fetch", "build the corpus from the manifest"), ("refresh", "re-pin the manifest")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where archives and the corpus go")
        sub.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
        sub.add_argument("--exclusions", type=Path, default=DEFAULT_EXCLUSIONS)
        if name == "refresh":
            sub.add_argument("--names", type=Path, default=DEFAULT_NAMES, help="the hand-written package list")
    args = parser.parse_args(argv)
    if not args.exclusions.is_file():
        print(f"no exclusion list at {args.exclusions}: pass --exclusions FILE", file=sys.stderr)
        return 2
    exclusions = ExclusionList.load(args.exclusions)
    cache = args.cache.expanduser()
    cache.mkdir(parents=True, exist_ok=True)
    if args.command == "refresh":
        return refresh(args.names, args.manifest, cache, exclusions)
    if not args.manifest.is_file():
        print(f"no manifest at {args.manifest}: run 'refresh' first or pass --manifest FILE", file=sys.stderr)
        return 2
    return fetch(args.manifest, cache, exclusions)


if __name__ == "__main__":
    sys.exit(main())
