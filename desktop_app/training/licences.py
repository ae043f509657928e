"""A package's licence, as its registry states it, and whether the corpus rule admits it.

Debian: the machine-readable debian/copyright (the `Files: *` paragraph's licence is the package's; every other
paragraph's, debian/* aside, is listed too); a copyright file in free form is matched against the usual
licence texts. npm: package.json's `license`. PyPI: PKG-INFO's License-Expression, License, or classifiers.
"""

from __future__ import annotations

import re

# Permissive and weak-copyleft licences, as Debian, npm (SPDX) and PyPI classifiers spell them. A model
# trained on code keeps no copy of it, but the rule stays with licences that ask nothing of such a use.
_PERMISSIVE = re.compile(
    r"^(expat|mit|x11|isc|zlib|unlicense|cc0|0bsd|bsd|apache|mpl|mozilla|lgpl|psf|python|public[- ]domain|"
    r"bsl|boost|artistic|ruby|php|openssl|ssleay|wtfpl|libpng|ijg|bzip2|curl|ncsa|unicode|w3c|zope|hpnd|"
    r"blueoak|upl|ofl|cc-by|epl|gnu lesser|lesser|historical|cnri|fsful|afl)"
    # Debian's names for a file's own short permissive grant: Janik-permissive, Iconv-PD, ...
    r"|permissive|-pd$",
    re.IGNORECASE,
)
# Free-form copyright files: the licence each well-known text is.
_TEXTS = [
    ("Expat", "Permission is hereby granted, free of charge"),
    ("Apache-2.0", "Apache License, Version 2.0"),
    ("Apache-2.0", "Apache License\n"),
    ("BSD", "Redistribution and use in source and binary forms"),
    ("MPL-2.0", "Mozilla Public License"),
    ("LGPL", "GNU Lesser General Public"),
    ("LGPL", "GNU Library General Public"),
    ("ISC", "Permission to use, copy, modify, and/or distribute this software for any"),
    ("public-domain", "public domain"),
    ("GPL", "GNU General Public License"),
]


def is_permissive(licence: str) -> bool:
    """Whether a licence expression lets Quarry train on the code: every part of an AND, some part of an OR."""
    expression = licence.strip().strip("()")
    if not expression:
        return False
    if re.search(r"\s(and|AND)\s", expression):
        return all(is_permissive(part) for part in re.split(r"\s(?:and|AND)\s", expression))
    if re.search(r"\s(or|OR)\s", expression):
        return any(is_permissive(part) for part in re.split(r"\s(?:or|OR)\s", expression))
    return bool(_PERMISSIVE.search(expression.removeprefix("License :: OSI Approved :: ")))


def debian_licences(copyright_text: str) -> tuple[str, list[str]]:
    """The package's licence and every licence its copyright file names (debian/* aside)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", copyright_text) if p.strip()]
    if not paragraphs or not re.match(r"Format:", paragraphs[0]):
        found = list(dict.fromkeys(name for name, text in _TEXTS if text.lower() in copyright_text.lower()))
        return (found[0] if found else "unknown"), found
    main = ""
    names: list[str] = []
    for paragraph in paragraphs:
        files = re.search(r"^Files:\s*(.*(\n[ \t].*)*)", paragraph, re.MULTILINE)
        licence = re.search(r"^License:[ \t]*(.+)$", paragraph, re.MULTILINE)
        if not files or not licence:
            continue
        patterns = files.group(1).split()
        name = licence.group(1).strip()
        if "*" in patterns:
            main = name
        if not all(p.startswith("debian/") for p in patterns) and name not in names:
            names.append(name)
    return (main or (names[0] if names else "unknown")), names


def npm_licence(value: object) -> str:
    if isinstance(value, dict):
        value = value.get("type")
    if isinstance(value, list):
        return " OR ".join(npm_licence(v) for v in value)
    return str(value) if value else "unknown"


def pypi_licence(pkg_info: str) -> str:
    header = pkg_info.split("\n\n", 1)[0]
    expression = re.search(r"^License-Expression:\s*(.+)$", header, re.MULTILINE)
    if expression:
        return expression.group(1).strip()
    classifiers = re.findall(r"^Classifier:\s*License :: (?:OSI Approved :: )?(.+)$", header, re.MULTILINE)
    if classifiers:
        return " OR ".join(c.strip() for c in classifiers)
    licence = re.search(r"^License:\s*(.+)$", header, re.MULTILINE)
    # Some put the whole licence text in the field: its first line names it well enough.
    return licence.group(1).strip()[:80] if licence else "unknown"
