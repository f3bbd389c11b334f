"""One test per key format: each is redacted, with what names it kept; ordinary words, git
commit ids and UUIDs are not (the repo scenario's answers name commits)."""

from __future__ import annotations

import pytest

from harness.core.redaction import REDACTED, looks_secret, redact

_GOOGLE = "AIzaSyD8f3kQ2xVb7Lm9Pq4Rt6Wn1Yc5Ze0Hj_U"
_ALNUM = "4eC39HqLyjWDarjtT1zdp7dc9fG2kQx8"
_JWT = (
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


@pytest.mark.parametrize(
    ("secret", "text"),
    [
        pytest.param(_GOOGLE, f"maps call failed: key={_GOOGLE}, quota", id="google-api-key"),
        pytest.param(_GOOGLE, f"GET /geocode?address=Paris&key={_GOOGLE}", id="google-key-in-url"),
        pytest.param(
            f"sk_live_{_ALNUM}", f"charge refused for sk_live_{_ALNUM}.", id="stripe-live"
        ),
        pytest.param(f"sk_test_{_ALNUM}", f"using sk_test_{_ALNUM}", id="stripe-test"),
        pytest.param(f"rk_live_{_ALNUM}", f"restricted rk_live_{_ALNUM}", id="stripe-restricted"),
        pytest.param("AKIAIOSFODNN7Q2XB4ZK", "aws id AKIAIOSFODNN7Q2XB4ZK in env", id="aws-key-id"),
        pytest.param(
            "ghp_" + "x7Kq2Lm9" * 4 + "Ab1c", "token ghp_" + "x7Kq2Lm9" * 4 + "Ab1c", id="ghp"
        ),
        pytest.param(
            "gho_" + "Zt4Pn8Wq" * 4 + "Xy2z", "oauth gho_" + "Zt4Pn8Wq" * 4 + "Xy2z", id="gho"
        ),
        pytest.param(
            "github_pat_11ABCDEFG0" + "aB3dE6gH9j" * 7 + "kLm",
            "pat github_pat_11ABCDEFG0" + "aB3dE6gH9j" * 7 + "kLm here",
            id="github-fine-grained-pat",
        ),
        pytest.param(
            "xoxb-2384756102-9384756102938-Gh4Kd9Lq2Wm7Zx1Pv5Tn8Rb3",
            "slack xoxb-2384756102-9384756102938-Gh4Kd9Lq2Wm7Zx1Pv5Tn8Rb3 denied",
            id="slack-bot-token",
        ),
        pytest.param(
            "xoxp-2384756102-9384756102-9384756102938-4f2a9c1d7e3b",
            "user xoxp-2384756102-9384756102-9384756102938-4f2a9c1d7e3b",
            id="slack-user-token",
        ),
        pytest.param(
            "sk-" + "Qw3Er5Ty7U" * 5, "OPENAI key sk-" + "Qw3Er5Ty7U" * 5, id="openai-legacy"
        ),
        pytest.param(
            "sk-proj-" + "Qw3Er5Ty7U" * 6, "key sk-proj-" + "Qw3Er5Ty7U" * 6, id="openai-project"
        ),
        pytest.param(
            "sk-ant-api03-" + "Zx9Cv8Bn7M" * 9 + "-AA",
            "anthropic sk-ant-api03-" + "Zx9Cv8Bn7M" * 9 + "-AA rejected",
            id="anthropic",
        ),
        pytest.param(
            "MIIEpAIBAAKCAQEA7bq98kLm\nZx4Qw2Er6Ty8",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98kLm\nZx4Qw2Er6Ty8\n"
            "-----END RSA PRIVATE KEY-----",
            id="private-key-block",
        ),
        pytest.param(_JWT, f"jwt {_JWT}", id="jwt"),
        pytest.param("h7Gk2Lp9Qz4Xw1", "Authorization: Bearer h7Gk2Lp9Qz4Xw1", id="bearer-header"),
        pytest.param(
            "dXNlcjpodW50ZXIy", "authorization: Basic dXNlcjpodW50ZXIy", id="basic-header"
        ),
        pytest.param("hunter22x", "postgres://app:hunter22x@db:5432/orders", id="password-in-url"),
        pytest.param(
            "hunter22x", "https://example.com/login?password=hunter22x", id="password-query"
        ),
        pytest.param(
            "glpat-" + "Ab3De6Gh9Jk2Mn5Pq8St",
            "gitlab glpat-" + "Ab3De6Gh9Jk2Mn5Pq8St",
            id="gitlab-pat (vendored only)",
        ),
        pytest.param(
            "SG." + "Ab3De6Gh9Jk2Mn5Pq8StUv" + "." + "Wx1Yz4Ab7Cd0Ef3Gh6Ij9Kl2Mn5Op8Qr1St4Uv7Wx0Y",
            "sendgrid SG."
            + "Ab3De6Gh9Jk2Mn5Pq8StUv"
            + "."
            + "Wx1Yz4Ab7Cd0Ef3Gh6Ij9Kl2Mn5Op8Qr1St4Uv7Wx0Y",
            id="sendgrid (vendored only)",
        ),
    ],
)
def test_a_key_of_each_format_is_redacted(secret: str, text: str) -> None:
    cleaned = redact(text)
    assert secret not in cleaned
    assert REDACTED in cleaned


def test_a_google_key_before_punctuation_loses_all_of_it() -> None:
    cleaned = redact(f"the key ({_GOOGLE}).")
    assert cleaned == f"the key ({REDACTED})."


@pytest.mark.parametrize(
    "plain",
    [
        pytest.param("Compare Paris, Atlantis and Tokyo", id="prose"),
        pytest.param(
            "The latest commit is 9fceb02d0ae598e95dc970b74767f19372d61af8.", id="git-sha"
        ),
        pytest.param("commit 9fceb02 fixed it; see a3f5c2e1b4d6", id="short-shas"),
        pytest.param("run 3f2504e0-4f89-11d3-9a0c-0305e82c3301 ended", id="uuid"),
        pytest.param(
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", id="sha256"
        ),
        pytest.param("refund order A-1001 for 42.50 EUR", id="order"),
        pytest.param("the token budget ran out at 0.9 pressure", id="token-word"),
        pytest.param("Ask the planner for a task list", id="sk-inside-words"),
        pytest.param("they say the key is in the monkey's pocket", id="key-words"),
        pytest.param("Cost: 7 tool calls, 3833 tokens, $0.0012, 2.5 s.", id="cost-line"),
        pytest.param("max_tokens=4000 and api_version=2024-06-01", id="numbers"),
        pytest.param("workflow run-7d1c2e9a-4b3f scope repo/main", id="ids"),
    ],
)
def test_ordinary_text_and_hashes_are_kept(plain: str) -> None:
    assert not looks_secret(plain), redact(plain)


def test_no_vendored_rule_keeps_the_lazy_prefix_python_pays_for_at_every_position() -> None:
    """gitleaks' `[\\w.-]{0,50}?` (doubled in some rules) is free in RE2 and costs Python's
    backtracking engine 2,500 tries a position: 50 KB dense with `cohere` took 8.5 s."""
    from harness.core.redaction import _LAZY_PREFIX, _VENDORED

    assert all(_LAZY_PREFIX not in rule.pattern.pattern for rule in _VENDORED)


def test_a_keyword_rule_still_finds_its_secret_behind_a_long_name() -> None:
    secret = "Zq4r8Tn2Vw6Yb1Xc5Md9Lf3Hg7Kj0Ps2Qa8Ue4Ox"
    text = f"service.prod.cohere-key: {secret}"  # no name the credential rule knows

    assert secret not in redact(text)
