"""What looks like a secret never reaches memory or the worker's log: API keys, bearer tokens,
passwords in URLs, private keys and `key=value` credentials are replaced.

Two sets of formats: gitleaks' rules (vendored as data in harness/core/secret_patterns.py: some 220
providers' key formats, each tried only when the text holds one of its keywords, and a match kept
when its secret's entropy is below the rule's, as gitleaks does), then the house rules below
(named credentials, Authorization headers, URL passwords, and the commonest keys again without
an entropy floor). Memory records, episodes, tool failure messages, every log line of the
worker and its MCP servers' stderr pass through `redact`.

Pure and conservative: a false positive costs a word of an episode, a false negative leaks a
key into every later prompt.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import NamedTuple

from harness.core.secret_patterns import PATTERNS, SecretPattern

REDACTED = "[redacted]"


class _Rule(NamedTuple):
    id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    entropy: float
    group: int


_LAZY_PREFIX = r"[\w.-]{0,50}?"
"""How gitleaks' keyword rules begin (also inside their leading `(?i:`): a lazy prefix that only
moves where a match starts, never which secret it finds. RE2, gitleaks' engine, pays nothing
for it; Python's backtracking engine tries it at every position, 2,500 ways when it is doubled
(50 KB of text dense with `cohere` took 8.5 s). It stands only at a rule's start, so it goes."""


def _rule(vendored: SecretPattern) -> _Rule:
    return _Rule(
        vendored.id,
        re.compile(vendored.regex.replace(_LAZY_PREFIX, "")),
        vendored.keywords,
        vendored.entropy,
        vendored.secret_group,
    )


_VENDORED = tuple(_rule(vendored) for vendored in PATTERNS)
_KEYWORDS = frozenset(keyword for rule in _VENDORED for keyword in rule.keywords)

_PATTERNS = [
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),  # Google API keys
    re.compile(r"\b[rs]k_(?:live|test|prod)_[0-9A-Za-z]{10,}"),  # Stripe secret and restricted keys
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"),  # Anthropic and OpenAI keys
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),  # JWTs
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"(?i)\bbasic\s+[A-Za-z0-9+/]{12,}=*"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
]
_CREDENTIAL = re.compile(
    # a name that says credential, with any prefix (ANTHROPIC_API_KEY, db_password,
    # client_secret, "password" as a JSON key), then its value: quoted, or one word that has a
    # letter in it (so `max_tokens=4000` stays)
    r"(?i)(\b[\w.-]{0,64}?(?:api[_-]?key|access[_-]?key|secret|password|passwd|pwd|token|"
    r"credentials?|private[_-]?key)s?[\"']?\s*[:=]\s*)"
    r"(?:\"[^\"\n]{3,}\"|'[^'\n]{3,}'|(?=[^\s'\",;}]*[A-Za-z])[^\s'\",;}]{6,})"
)
_AUTHORIZATION = re.compile(
    r"(?i)(\bauthorization[\"']?\s*[:=]\s*)[\"']?(?:(?:bearer|basic|token|digest)\s+)?[^\s\"',;}]+"
)
_URL_PASSWORD = re.compile(
    # bounded, so hostile text (`a+a+a+...`, a host with no `@` after it) stays linear
    r"(\b[a-z][a-z0-9+.\-]{0,31}://[^\s:/@]{1,256}:)[^\s@/]{1,256}(@)",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """The text with everything that looks like a secret replaced by `[redacted]`."""
    text = _redact_vendored(text)
    for pattern in _PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = _AUTHORIZATION.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _CREDENTIAL.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(2)}", text)


def looks_secret(text: str) -> bool:
    return redact(text) != text


def _redact_vendored(text: str) -> str:
    """Each rule tried only near its keywords (gitleaks' keywords are part of what its rule
    matches): over a long text, an expression like `[\\w.-]{0,50}?(?:okta)...` is slow."""
    lowered = text.translate(_ASCII_LOWER)  # not str.lower(): it can change the length
    present = {keyword for keyword in _KEYWORDS if keyword in lowered}
    for rule in _VENDORED:
        if rule.keywords and present.isdisjoint(rule.keywords):
            continue  # most rules, most texts: the cheap test first
        spans = _near(lowered, rule.keywords) if rule.keywords else [(0, len(text))]
        pieces: list[str] = []
        done = 0
        for start, end in spans:
            for match in rule.pattern.finditer(text, start, end):
                cleaned = _secret_out(match, rule)
                if cleaned != match.group(0):
                    pieces += [text[done : match.start()], cleaned]
                    done = match.end()
        if pieces:
            text = "".join([*pieces, text[done:]])
            lowered = text.translate(_ASCII_LOWER)
    return text


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_BEFORE = 256
"""How far before its keyword a vendored rule's match may start (`[\\w.-]{0,50}?` and a name)."""
_AFTER = 1024
"""How far after its keyword a match is looked for, and then on to the next space (a secret has
none; the window never ends inside one) within _LONGEST."""
_LONGEST = 8192
_SPACE = re.compile(r"\s")


def _near(lowered: str, keywords: tuple[str, ...]) -> list[tuple[int, int]]:
    """The spans of `lowered` around each occurrence of a keyword, merged, in order."""
    windows: list[tuple[int, int]] = []
    for keyword in keywords:
        at = lowered.find(keyword)
        while at >= 0:
            windows.append((max(0, at - _BEFORE), at + len(keyword) + _AFTER))
            at = lowered.find(keyword, at + 1)
    extended = [(start, _to_space(lowered, end)) for start, end in _merged(windows)]
    return [piece for window in _merged(extended) for piece in _pieces(lowered, *window)]


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A window cut at spaces into pieces of about _AFTER characters: where a keyword is
    everywhere, an expression with `.*?` (curl's) would otherwise scan on to the end from each."""
    pieces = []
    while end - start > _AFTER:
        cut = _to_space(text, start + _AFTER)
        pieces.append((start, cut))
        start = cut
    return [*pieces, (start, end)] if end > start else pieces


def _merged(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _to_space(text: str, end: int) -> int:
    if end >= len(text):
        return len(text)
    space = _SPACE.search(text, end, end + _LONGEST)
    return space.start() if space else min(len(text), end + _LONGEST)


def _secret_out(match: re.Match[str], rule: _Rule) -> str:
    """The match with its secret (the rule's group, else its first group that matched, else the
    whole) replaced; unchanged when the secret is too regular to be one."""
    group = rule.group or next((i for i, g in enumerate(match.groups(), 1) if g is not None), 0)
    secret = match.group(group)
    if not secret or (rule.entropy and _entropy(secret) < rule.entropy):
        return match.group(0)
    start, end = match.start(group) - match.start(), match.end(group) - match.start()
    whole = match.group(0)
    return whole[:start] + REDACTED + whole[end:]


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character, as gitleaks measures a secret."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
