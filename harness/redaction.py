"""What looks like a secret never reaches memory: API keys, bearer tokens, passwords in URLs
and `key=value` credentials are replaced before anything is written.

Pure and conservative: a false positive costs a word of an episode, a false negative leaks a
key into every later prompt.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

_PATTERNS = [
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
    r"(?i)(\b[\w.-]*?(?:api[_-]?key|access[_-]?key|secret|password|passwd|pwd|token|"
    r"credentials?|private[_-]?key)s?[\"']?\s*[:=]\s*)"
    r"(?:\"[^\"\n]{3,}\"|'[^'\n]{3,}'|(?=[^\s'\",;}]*[A-Za-z])[^\s'\",;}]{6,})"
)
_AUTHORIZATION = re.compile(
    r"(?i)(\bauthorization[\"']?\s*[:=]\s*)[\"']?(?:(?:bearer|basic|token|digest)\s+)?[^\s\"',;}]+"
)
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(@)", re.IGNORECASE)


def redact(text: str) -> str:
    """The text with everything that looks like a secret replaced by `[redacted]`."""
    for pattern in _PATTERNS:
        text = pattern.sub(REDACTED, text)
    text = _AUTHORIZATION.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = _CREDENTIAL.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(2)}", text)


def looks_secret(text: str) -> bool:
    return redact(text) != text
