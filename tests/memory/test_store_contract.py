"""The memory store's contract, the same on SQLite and on a real Postgres."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from harness.recall.memory_context import MemoryTier
from harness.recall.memory_records import MemoryFilter, MemoryRecord
from memory import StoreError, open_store
from memory.sqlite_store import SqliteMemoryStore
from memory.store import MemoryStore

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def record(
    memory_id: str,
    *,
    scope: str = "default",
    session: str | None = None,
    minutes: int = 0,
    text: str = "Run of 'Compare Paris and Atlantis' ended SUCCEEDED. No data: Atlantis.",
    tier: MemoryTier = MemoryTier.EPISODIC,
) -> MemoryRecord:
    return MemoryRecord(
        id=memory_id,
        tier=tier,
        scope=scope,
        text=text,
        session_id=session,
        scenario="cities",
        missing=["Atlantis"],
        at=T0 + timedelta(minutes=minutes),
        data={"status": "SUCCEEDED", "tool_calls": 7},
    )


def test_a_record_reads_back_as_it_was_written(store: MemoryStore) -> None:
    written = record("episode-a", session="s1")
    store.put(written)
    assert store.get("episode-a") == written
    assert store.get("episode-none") is None


def test_writing_the_same_id_again_replaces_it_and_adds_nothing(store: MemoryStore) -> None:
    store.put(record("episode-a"))
    store.put(record("episode-a", text="Run of 'Compare Rome' ended FAILED_EXECUTION."))
    found = store.select(MemoryFilter())
    assert [r.id for r in found] == ["episode-a"] and "Rome" in found[0].text


def test_a_listing_is_newest_first_and_filters_by_scope_session_and_tier(
    store: MemoryStore,
) -> None:
    store.put(record("e1", session="s1", minutes=1))
    store.put(record("e2", session="s2", minutes=3))
    store.put(record("e3", session="s1", minutes=2, scope="shop"))
    store.put(record("f1", minutes=4, tier=MemoryTier.SEMANTIC, text="Refunds take 5 days."))
    assert [r.id for r in store.select(MemoryFilter())] == ["f1", "e2", "e3", "e1"]
    assert [r.id for r in store.select(MemoryFilter(scope="default"))] == ["f1", "e2", "e1"]
    assert [r.id for r in store.select(MemoryFilter(session_id="s1"))] == ["e3", "e1"]
    assert [r.id for r in store.select(MemoryFilter(tier=MemoryTier.SEMANTIC))] == ["f1"]
    assert [r.id for r in store.select(MemoryFilter(), limit=2)] == ["f1", "e2"]


def test_forget_removes_what_it_names_and_nothing_else(store: MemoryStore) -> None:
    for index, (scope, session) in enumerate(
        [("default", "s1"), ("default", "s2"), ("shop", "s1"), ("shop", None)]
    ):
        store.put(record(f"e{index}", scope=scope, session=session, minutes=index))
    assert store.forget(MemoryFilter(id="e1")) == 1
    assert store.forget(MemoryFilter(session_id="s1", scope="default")) == 1
    assert sorted(r.id for r in store.select(MemoryFilter())) == ["e2", "e3"]
    assert store.forget(MemoryFilter(scope="shop")) == 2
    assert store.select(MemoryFilter()) == []
    assert store.forget(MemoryFilter(id="e9")) == 0


def test_forget_refuses_to_forget_everything(store: MemoryStore) -> None:
    store.put(record("e1"))
    with pytest.raises(StoreError, match="never forgets everything"):
        store.forget(MemoryFilter(tier=MemoryTier.EPISODIC))
    assert store.get("e1") is not None


def test_a_secret_in_a_memory_is_never_stored(store: MemoryStore) -> None:
    leaky = record("e1", text="The call failed: 401 for Authorization: Bearer abcdef0123456789")
    store.put(leaky.model_copy(update={"data": {"k": "sk-ant-" + "x" * 30}}))
    found = store.get("e1")
    assert found is not None
    assert "abcdef0123456789" not in found.model_dump_json()
    assert "xxxxxxxxxx" not in found.model_dump_json()


def test_the_sqlite_file_itself_holds_no_secret(tmp_path: Path) -> None:
    store = SqliteMemoryStore(tmp_path / "m.db")
    leaky = record("e1", text="retry with api_key=hunter2hunter2")
    store.put(
        leaky.model_copy(update={"text": "api_key=hunter2hunter2", "missing": ["sk-" + "y" * 30]})
    )
    store.close()
    assert b"hunter2" not in (tmp_path / "m.db").read_bytes()
    assert b"yyyyyyyyyy" not in (tmp_path / "m.db").read_bytes()


def test_two_handles_on_one_sqlite_file_see_each_others_writes(tmp_path: Path) -> None:
    """Several workers on one machine share the file."""
    first, second = SqliteMemoryStore(tmp_path / "m.db"), SqliteMemoryStore(tmp_path / "m.db")
    first.put(record("e1"))
    assert second.get("e1") is not None
    first.close()
    second.close()


def test_an_unknown_store_url_is_refused_with_the_forms_it_takes(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"postgresql://USER@HOST:PORT/DB or sqlite:///PATH"):
        open_store("mysql://db/x", tmp_path)


def test_a_postgres_that_cannot_be_reached_is_one_line_without_its_password(
    tmp_path: Path,
) -> None:
    with pytest.raises(StoreError) as refused:
        open_store("postgresql://bob:hunter2@127.0.0.1:1/memory", tmp_path)
    assert "hunter2" not in str(refused.value) and "\n" not in str(refused.value)
    assert "postgresql://bob@127.0.0.1:1/memory" in str(refused.value)
