"""Settings read as the Temporal CLI reads its connection, and the harness's own variables
checked with messages that name them."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.settings import Settings, SettingsError


def test_the_ui_link_follows_the_servers_port_unless_harness_ui_url_says_otherwise() -> None:
    assert Settings.from_env({}).ui_url == "http://localhost:8233"
    assert Settings.from_env({"TEMPORAL_ADDRESS": "127.0.0.1:7300"}).ui_url == (
        "http://127.0.0.1:8300"
    )
    given = {"TEMPORAL_ADDRESS": "127.0.0.1:7300", "HARNESS_UI_URL": "https://ui.example"}
    assert Settings.from_env(given).ui_url == "https://ui.example"


def test_a_profile_of_the_config_file_is_read_and_a_variable_overrides_it(tmp_path: Path) -> None:
    config = tmp_path / "temporal.toml"
    config.write_text('[profile.prod]\naddress = "10.0.0.5:7233"\nnamespace = "shop"\n')
    env = {"TEMPORAL_CONFIG_FILE": str(config), "TEMPORAL_PROFILE": "prod"}
    settings = Settings.from_env(env)
    assert (settings.temporal_address, settings.temporal_namespace) == ("10.0.0.5:7233", "shop")
    assert Settings.from_env(env | {"TEMPORAL_NAMESPACE": "other"}).temporal_namespace == "other"


def test_an_empty_temporal_variable_counts_as_unset() -> None:
    settings = Settings.from_env(
        {"TEMPORAL_TLS": "", "TEMPORAL_API_KEY": " ", "TEMPORAL_ADDRESS": ""}
    )
    assert (settings.temporal_tls, settings.temporal_api_key) == (False, None)
    assert settings.temporal_address == "localhost:7233"


def test_an_api_key_turns_tls_on_and_never_shows_in_the_settings_repr() -> None:
    settings = Settings.from_env({"TEMPORAL_API_KEY": "secret-key-1234"})
    assert settings.temporal_tls is True
    assert "secret-key-1234" not in repr(settings)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"TEMPORAL_PROFILE": "nope"}, "profile 'nope'"),
        ({"HARNESS_MEMORY_URL": "redis://x"}, "HARNESS_MEMORY_URL must be postgresql://"),
        ({"HARNESS_MAX_TOKENS": "many"}, "HARNESS_MAX_TOKENS='many' is not a int"),
        ({"HARNESS_MAX_CACHED_WORKFLOWS": "0"}, "HARNESS_MAX_CACHED_WORKFLOWS must be a positive"),
        ({"HARNESS_ACTIVITY_TASK_POLLERS": "2.5"}, "HARNESS_ACTIVITY_TASK_POLLERS='2.5'"),
    ],
)
def test_a_setting_that_cannot_be_used_names_its_variable(env: dict[str, str], said: str) -> None:
    with pytest.raises(SettingsError, match=said):
        Settings.from_env(env)


def test_tls_follows_the_sdks_rule_an_api_key_turns_it_on_unless_told_otherwise() -> None:
    assert Settings.from_env({"TEMPORAL_API_KEY": "k"}).temporal_tls is True
    assert (
        Settings.from_env({"TEMPORAL_API_KEY": "k", "TEMPORAL_TLS": "false"}).temporal_tls is False
    )


def test_a_config_file_that_is_not_there_is_said_even_without_a_profile(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"TEMPORAL_CONFIG_FILE=.* is not a file"):
        Settings.from_env({"TEMPORAL_CONFIG_FILE": str(tmp_path / "none.toml")})


def test_a_shutdown_grace_of_zero_is_a_stop_that_does_not_wait() -> None:
    assert Settings.from_env({"HARNESS_SHUTDOWN_GRACE_SECONDS": "0"}).shutdown_grace_seconds == 0


def test_a_default_token_limit_past_float_range_is_read_not_raised() -> None:
    """HARNESS_MAX_TOKENS=1 and 400 zeros raised OverflowError out of the CLI; the run's own
    bounds refuse it by name (harness.engine.bounds)."""
    settings = Settings.from_env({"HARNESS_MAX_TOKENS": "1" + "0" * 400})
    assert settings.max_tokens == 10**400
