"""Similarity between a goal and memories: BM25 by default, Jaccard as the baseline the design
names, sentence embeddings as an optional extra. Each answers with scores from 0 to 1."""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import bm25s
import numpy
import Stemmer

from harness.recall.memory_context import jaccard

_STEMMER = Stemmer.Stemmer("english")
"""Snowball's English stemmer (PyStemmer): "canals" finds "canal"."""
EMBEDDINGS_ENV = "HARNESS_EMBEDDINGS_MODEL"
"""A local sentence-transformers model directory; set, the worker ranks by embeddings."""


class Ranker(Protocol):
    name: str

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, 0 (nothing shared) to 1 (the best match)."""


class JaccardRanker:
    name = "jaccard"

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        return [jaccard(query, text) for text in texts]


class Bm25Ranker:
    """Okapi BM25 (bm25s) over the texts, English stop words removed and words stemmed; scaled
    so the best match scores 1 (BM25 has no upper bound of its own). The index of the last few
    corpora is kept: a cache of what the store holds, rebuilt whenever the texts change, never
    the only copy."""

    name = "bm25"

    def __init__(self, cached: int = 4) -> None:
        self._cached = cached
        self._indexes: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        corpus, index = self._index(texts)
        asked = bm25s.tokenize(
            [query], stopwords="en", stemmer=_STEMMER, show_progress=False, return_ids=False
        )
        words = [word for word in asked[0] if word in corpus.vocab]
        if not words:
            return [0.0] * len(texts)
        raw = [float(score) for score in index.get_scores(words)]
        best = max(raw)
        return [score / best if best > 0 else 0.0 for score in raw]

    def _index(self, texts: Sequence[str]) -> tuple[Any, Any]:
        key = hash(tuple(texts))
        with self._lock:
            if key in self._indexes:
                self._indexes.move_to_end(key)
                return self._indexes[key]
        corpus = bm25s.tokenize(list(texts), stopwords="en", stemmer=_STEMMER, show_progress=False)
        index = bm25s.BM25()
        index.index(corpus, show_progress=False)
        with self._lock:
            self._indexes[key] = (corpus, index)
            while len(self._indexes) > self._cached:
                self._indexes.popitem(last=False)
        return corpus, index


class EmbeddingRanker:
    """Cosine similarity of sentence embeddings from a local model directory (for example the
    all-MiniLM-L6-v2 files); needs the `embeddings` extra (sentence-transformers)."""

    name = "embeddings"

    def __init__(self, model_dir: Path, cached: int = 100_000) -> None:
        from sentence_transformers import SentenceTransformer

        self._model: Any = SentenceTransformer(str(model_dir), device="cpu")
        self._cached = cached
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        """Each text's embedding, computed once: a cache, rebuilt by any worker that lacks it."""
        self._lock = threading.Lock()

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        with self._lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
        fresh = [t for t in dict.fromkeys(texts) if t not in known]
        if fresh:
            encoded = self._model.encode(fresh, normalize_embeddings=True, batch_size=64)
            known.update(zip(fresh, encoded, strict=True))
            with self._lock:
                self._vectors.update(zip(fresh, encoded, strict=True))
                while len(self._vectors) > self._cached:
                    self._vectors.popitem(last=False)
        asked = self._model.encode([query], normalize_embeddings=True)[0]
        matrix = numpy.stack([known[text] for text in texts])
        return [max(0.0, float(score)) for score in matrix @ asked]


def default_ranker() -> Ranker:
    """Embeddings when a model directory is configured, else BM25."""
    model = os.environ.get(EMBEDDINGS_ENV, "").strip()
    return EmbeddingRanker(Path(model)) if model else Bm25Ranker()


def top(scores: Sequence[float], count: int) -> list[int]:
    """The indexes of the `count` best scores above zero, best first (ties: the earlier)."""
    ranked = sorted(
        (index for index, score in enumerate(scores) if score > 0 and not math.isnan(score)),
        key=lambda index: -scores[index],
    )
    return ranked[:count]
