"""Write harness/core/secret_patterns.py from gitleaks' rule set (config/gitleaks.toml, MIT).

    python -m tests.vendor_secret_patterns PATH/TO/gitleaks.toml COMMIT >
    harness/core/secret_patterns.py
    ruff format harness/core/secret_patterns.py

gitleaks' rules are Go (RE2) expressions; this keeps each rule Python's `re` can compile once
translated (a `(?i)` inside an expression becomes a scoped `(?i:...)` to the end of its group,
POSIX classes are spelled out, `\\z` becomes `\\Z`) and drops the rest, saying which on stderr.
Where a rule ends a secret with gitleaks' terminator (a quote, space, `;`, `\\n` or the end), the
secret here ends at any character that cannot be part of it: prose puts a key before `.` or `,`,
and a log line puts one before `)`; only the secret is redacted, so the terminator is not consumed.
Left out on purpose: rules without a regex (file-name rules) and `generic-api-key`, whose
false positives gitleaks holds back with a list of 1,400 stopwords; harness/core/redaction.py keeps
its own rule for named credentials (`api_key=...`, `password: ...`) instead.
"""

from __future__ import annotations

import re
import sys
import tomllib
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_LEFT_OUT = {"generic-api-key"}
_POSIX = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:lower:]": "a-z",
    "[:upper:]": "A-Z",
    "[:xdigit:]": "0-9a-fA-F",
    "[:word:]": "\\w",
    "[:space:]": "\\s",
}


_TERMINATOR = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
_SECRET_ENDS = r"(?![\w+/=-])"


def python_regex(go: str) -> str:
    """A Go (RE2) expression in Python's dialect, as far as gitleaks' rules need."""
    text = go.replace(_TERMINATOR, _SECRET_ENDS).replace("\\z", "\\Z")
    for posix, spelled in _POSIX.items():
        text = text.replace(posix, spelled)
    while (start := text.find("(?i)", 1)) > 0:
        end = _group_end(text, start + 4)
        text = text[:start] + "(?i:" + text[start + 4 : end] + ")" + text[end:]
    return text


def _group_end(text: str, index: int) -> int:
    """Where the group holding `index` closes (or the text ends)."""
    depth, in_class = 0, False
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if text[index + 1 : index + 2] == "]":
                index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    return len(text)


def _compiles(pattern: str) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(pattern)
        except (re.error, FutureWarning) as error:
            return str(error)
    return None


def main(source: Path, commit: str) -> None:
    rules: list[dict[str, Any]] = tomllib.loads(source.read_text())["rules"]
    kept: list[str] = []
    for rule in rules:
        if rule["id"] in _LEFT_OUT or "regex" not in rule:
            print(f"left out {rule['id']}", file=sys.stderr)
            continue
        pattern = python_regex(rule["regex"])
        if (problem := _compiles(pattern)) is not None:
            print(f"dropped {rule['id']}: {problem}", file=sys.stderr)
            continue
        keywords = tuple(sorted({word.lower() for word in rule.get("keywords", [])}))
        kept.append(
            f"    SecretPattern(\n        {rule['id']!r},\n        {pattern!r},\n"
            f"        {keywords!r},\n        {float(rule.get('entropy', 0.0))!r},\n"
            f"        {int(rule.get('secretGroup', 0))!r},\n    ),"
        )
    today = datetime.now(UTC).date().isoformat()
    print(_HEADER.format(commit=commit, date=today, count=len(kept), total=len(rules)))
    print("PATTERNS: tuple[SecretPattern, ...] = (")
    print("\n".join(kept))
    print(")")


_HEADER = '''# ruff: noqa: E501
"""Secret formats vendored from gitleaks' default rule set, as data.

Source: https://github.com/gitleaks/gitleaks, config/gitleaks.toml at commit {commit}
Licence: MIT, Copyright (c) 2019 Zachary Rice (the rules' expressions and keywords are his
project's; the licence text is in gitleaks' LICENSE file).
Vendored: {date}, {count} of its {total} rules, translated to Python's `re` dialect by
tests/vendor_secret_patterns.py (which says what it left out and why). Do not edit by hand:
run that script again to update.
"""

from __future__ import annotations

from typing import NamedTuple


class SecretPattern(NamedTuple):
    id: str
    regex: str
    keywords: tuple[str, ...]
    """Lower-case words one of which the text must hold for the rule to be tried."""
    entropy: float
    """The least Shannon entropy (bits per character) of a match's secret: below it, not one."""
    secret_group: int
    """The group that is the secret; 0: the first group if the regex has one, else the match."""

'''

if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
