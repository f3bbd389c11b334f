"""`python -m bench retrieval [N]`: how well and how fast memories are found.

Quality on the labelled set of `bench.retrieval_cases` (62 queries, many of them paraphrases):
recall@3 (the share of a query's relevant memories among the first three) and MRR (the mean
of 1/rank of the first relevant one), for BM25 (the default) beside Jaccard (the baseline the
design names), and for sentence embeddings when HARNESS_EMBEDDINGS_MODEL names a local model
directory and sentence-transformers is installed.

Speed at N memories (10,000 by default) in a SQLite store: one retrieval as the activity does
it (the scope's records read from the store, then ranked), median of 20 queries, BM25 beside
Jaccard.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.env import log
from bench.report import Measurement, measure
from bench.retrieval_cases import EPISODES, QUERIES
from harness.recall.memory_context import MemoryTier
from harness.recall.memory_records import MemoryFilter, MemoryQuery, MemoryRecord
from memory.ranking import (
    EMBEDDINGS_ENV,
    Bm25Ranker,
    EmbeddingRanker,
    JaccardRanker,
    Ranker,
    top,
)
from memory.retrieval import rank
from memory.sqlite_store import SqliteMemoryStore
from scenarios.cities.data import CITIES

DEFAULT_MEMORIES = 10_000
TIMED_QUERIES = 20
T0 = datetime(2026, 11, 1, tzinfo=UTC)
SCOPE = MemoryFilter(scope="bench")


def corpus() -> dict[str, str]:
    """id -> text: the cities scenario's facts (as the worker makes them) and the episodes."""
    facts = {
        f"city:{city.name}": f"{city.name}, {city.country}: {city.known_for}" for city in CITIES
    }
    return {**facts, **EPISODES}


def quality(ranker: Ranker) -> tuple[float, float]:
    """(recall@3, MRR) over the labelled queries, ranking every memory of the corpus."""
    memories = corpus()
    ids, texts = list(memories), list(memories.values())
    recalls, reciprocal = [], []
    for query, relevant in QUERIES:
        ranked = [ids[i] for i in top(ranker.scores(query, texts), len(ids))]
        recalls.append(len(set(ranked[:3]) & set(relevant)) / len(relevant))
        first = next((rank for rank, mid in enumerate(ranked, 1) if mid in relevant), None)
        reciprocal.append(1 / first if first else 0.0)
    return statistics.fmean(recalls), statistics.fmean(reciprocal)


def _filled_store(path: Path, count: int) -> SqliteMemoryStore:
    """The labelled memories plus filler episodes of many goals, `count` in all."""
    store = SqliteMemoryStore(path)
    cities = [city.name for city in CITIES]
    labelled = list(corpus().items())
    for index in range(count):
        if index < len(labelled):
            memory_id, text = labelled[index]
        else:
            a, b = cities[index % len(cities)], cities[(index * 7 + 3) % len(cities)]
            memory_id = f"filler-{index}"
            text = (
                f"Run of 'Compare {a} and {b}' (cities) ended SUCCEEDED in one attempt. "
                f"Cost: {index % 13 + 4} tool calls, {900 + index % 400} tokens."
            )
        store.put(
            MemoryRecord(
                id=memory_id,
                tier=MemoryTier.EPISODIC,
                scope="bench",
                text=text,
                scenario="cities",
                at=T0 + timedelta(seconds=index),
            )
        )
    return store


def latency_ms(store: SqliteMemoryStore, ranker: Ranker) -> float:
    """The median retrieval, as the activity does it: read the scope, rank, take the best."""
    timings = []
    for query, _ in QUERIES[:TIMED_QUERIES]:
        asked = MemoryQuery(run_id="bench", goal=query, scenario="cities", scope="bench")
        started = time.perf_counter()
        rank(asked, store.select(SCOPE), [], ranker)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


async def run(memories: int = DEFAULT_MEMORIES) -> list[Measurement]:
    rankers: list[Ranker] = [JaccardRanker(), Bm25Ranker()]
    model = os.environ.get(EMBEDDINGS_ENV, "").strip()
    embeddings_note = None
    if model:
        try:
            rankers.append(EmbeddingRanker(Path(model)))
        except Exception as error:  # no extra installed, or no model there: said, not fatal
            embeddings_note = f"embeddings not measured: {type(error).__name__}: {error}"
    else:
        embeddings_note = f"embeddings not measured: set {EMBEDDINGS_ENV} to a model directory"
    scores = {ranker.name: quality(ranker) for ranker in rankers}
    log(f"quality: {scores}")
    rows: list[Measurement] = []
    base_recall, base_mrr = scores["jaccard"]
    for name, (recall, mrr) in scores.items():
        baseline = name != "jaccard"
        rows.append(
            measure(
                "retrieval",
                f"{name}.recall_at_3",
                recall,
                "share",
                baseline=base_recall if baseline else None,
                vs="jaccard.recall_at_3" if baseline else None,
                note=f"{len(QUERIES)} labelled queries" if name == "jaccard" else None,
            )
        )
        rows.append(
            measure(
                "retrieval",
                f"{name}.mrr",
                mrr,
                "1/rank",
                baseline=base_mrr if baseline else None,
                vs="jaccard.mrr" if baseline else None,
            )
        )
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as directory:
        log(f"writing {memories} memories")
        store = _filled_store(Path(directory) / "memory.db", memories)
        read = []
        for _ in range(5):
            started = time.perf_counter()
            store.select(SCOPE)
            read.append((time.perf_counter() - started) * 1000)
        timed = {ranker.name: latency_ms(store, ranker) for ranker in rankers}
        store.close()
    rows.append(
        measure(
            f"retrieval{memories}",
            "bm25.retrieve_ms",
            timed["bm25"],
            "ms",
            baseline=timed["jaccard"],
            vs="jaccard.retrieve_ms",
            note=f"median of {TIMED_QUERIES}; reading the {memories} records from SQLite takes "
            f"{statistics.median(read):.0f} ms of it (median of 5)",
        )
    )
    if "embeddings" in timed:
        rows.append(
            measure(
                f"retrieval{memories}",
                "embeddings.retrieve_ms",
                timed["embeddings"],
                "ms",
                baseline=timed["bm25"],
                vs="bm25.retrieve_ms",
                note="the memories' embeddings cached after the first query; the query's own "
                "is computed each time",
            )
        )
    if embeddings_note:
        rows.append(
            measure("retrieval", "embeddings.recall_at_3", None, "share", note=embeddings_note)
        )
    return rows
