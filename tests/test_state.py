"""The state directory: HARNESS_STATE_DIR, else the per-user XDG state directory; never the
current one, and every reader (settings, the payment token, the server and eval defaults) asks
the one function."""

from __future__ import annotations

from pathlib import Path

from infra.settings import Settings
from infra.state import evals_dir, server_database, state_dir
from payments.secret import secret_file


def test_harness_state_dir_wins_over_the_per_user_default() -> None:
    env = {"HARNESS_STATE_DIR": "/srv/harness", "XDG_STATE_HOME": "/x", "HOME": "/home/u"}
    assert state_dir(env) == Path("/srv/harness")


def test_without_it_the_xdg_state_home_holds_a_folder_of_the_harness() -> None:
    assert state_dir({"XDG_STATE_HOME": "/x", "HOME": "/home/u"}) == Path("/x/durable-harness")


def test_without_either_the_state_is_under_the_home_not_the_current_directory() -> None:
    expected = Path("/home/u/.local/state/durable-harness")
    assert state_dir({"HOME": "/home/u"}) == expected
    assert state_dir({"HARNESS_STATE_DIR": "  ", "XDG_STATE_HOME": "", "HOME": "/home/u"}) == (
        expected  # compose passes empty variables through: empty is unset
    )


def test_a_relative_xdg_state_home_is_ignored_as_the_spec_says() -> None:
    env = {"XDG_STATE_HOME": "state", "HOME": "/home/u"}
    assert state_dir(env) == Path("/home/u/.local/state/durable-harness")


def test_a_tilde_in_harness_state_dir_is_the_home() -> None:
    assert state_dir({"HARNESS_STATE_DIR": "~/h"}) == Path("~/h").expanduser()


def test_every_reader_asks_the_one_function() -> None:
    env = {"XDG_STATE_HOME": "/x", "HOME": "/home/u"}
    base = Path("/x/durable-harness")
    assert Settings.from_env(env).state_dir == base
    assert secret_file(env) == base / "payments.secret"
    assert server_database(env) == base / "temporal.db"
    assert evals_dir(env) == base / "evals"


def test_the_tests_never_write_to_the_real_home() -> None:
    """The conftest gives each test a state directory, and an XDG_STATE_HOME, of its own."""
    assert Settings().state_dir != Path.home() / ".local" / "state" / "durable-harness"
    assert Settings().state_dir == state_dir() != state_dir({"HOME": str(Path.home())})
