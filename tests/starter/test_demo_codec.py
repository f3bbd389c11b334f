"""`make demo` starts the codec server its dev server's UI is pointed at, `make stop` ends it,
and a port another program holds leaves the demo running without it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from infra.settings import Settings
from starter.cli import local_services
from starter.servers.codec_server import codec_answers
from tests.payment_service import free_port


async def test_the_demo_starts_a_codec_server_and_stop_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    monkeypatch.setattr(local_services, "CODEC_PORT", port)
    settings = Settings(state_dir=tmp_path)
    assert await local_services._ensure_codec(settings, 8233) == f"http://127.0.0.1:{port}"
    assert codec_answers(port) and (tmp_path / "codec.pid").exists()
    local_services.stop(settings)
    assert "stopped codec" in capsys.readouterr().out
    assert not (tmp_path / "codec.pid").exists()


async def test_a_codec_port_another_program_holds_leaves_the_ui_without_a_codec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        monkeypatch.setattr(local_services, "CODEC_PORT", other.getsockname()[1])
        assert await local_services._ensure_codec(Settings(state_dir=tmp_path), 8233) is None
    assert "is taken by another program" in capsys.readouterr().err
    assert not (tmp_path / "codec.pid").exists()
