"""Fixtures: each provider test runs once per API, against its own fake server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from activities.llm import LLMProvider
from tests.fakes import FakeApi, FakeServer
from tests.providers.support import APIS, build_provider


@pytest.fixture(params=sorted(APIS))
def api(request: pytest.FixtureRequest) -> FakeApi:
    return APIS[request.param]


@pytest.fixture
def server(api: FakeApi) -> Iterator[FakeServer]:
    with FakeServer(api.route) as fake:
        yield fake


@pytest.fixture
def provider(api: FakeApi, server: FakeServer) -> LLMProvider:
    return build_provider(api, api.base_url(server.url))
