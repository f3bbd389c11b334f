"""What looks like a secret is replaced before it can reach memory; ordinary text is kept."""

from __future__ import annotations

import pytest

from harness.core.redaction import REDACTED, looks_secret, redact


@pytest.mark.parametrize(
    "secret",
    [
        "sk-ant-api03-" + "a" * 40,
        "sk-proj-" + "b" * 40,
        "ghp_" + "c" * 36,
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdef",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ],
)
def test_a_known_key_shape_is_redacted(secret: str) -> None:
    assert redact(f"the key {secret} failed") == f"the key {REDACTED} failed"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("ANTHROPIC_API_KEY=abcd1234efgh", "ANTHROPIC_API_KEY="),
        ("db_password=hunter22", "db_password="),
        ("client_secret=xyzxyzxyz", "client_secret="),
        ("GITHUB_TOKEN=abcdefghijk", "GITHUB_TOKEN="),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "AWS_SECRET_ACCESS_KEY="),
        ('{"password": "hunter22"}', '{"password": '),
        ('password: "correct horse battery"', "password: "),
        ("Authorization: token abcdef123456", "Authorization: "),
    ],
)
def test_a_named_credential_loses_its_value_whatever_its_prefix_or_quoting(
    text: str, kept: str
) -> None:
    assert redact(text).startswith(kept + REDACTED)


def test_bearer_tokens_credentials_and_url_passwords_are_redacted() -> None:
    text = "Authorization: Bearer abc.def-123456 then password=hunter22 at postgres://u:pw9@h/db"
    cleaned = redact(text)
    assert "abc.def-123456" not in cleaned and "hunter22" not in cleaned and "pw9" not in cleaned
    assert cleaned.endswith("postgres://u:[redacted]@h/db")


@pytest.mark.parametrize(
    "plain",
    [
        "Compare Paris, Atlantis and Tokyo",
        "refund order A-1001 for 42.50 EUR",
        "the token budget ran out at 0.9 pressure",
        "sk-short",
        "max_tokens=4000 and tokens: 3833",
        "Cost: 7 tool calls, 3833 tokens, $0.0012, 2.5 s.",
    ],
)
def test_ordinary_text_is_kept_as_it_is(plain: str) -> None:
    assert not looks_secret(plain)
