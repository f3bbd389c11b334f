"""Measurements: one JSON line each, then a short aligned table."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import TextIO

from bench.env import PERSISTENCE

_output: TextIO = sys.stdout


def keep_stdout_for_results() -> None:
    """From now on only measurements reach stdout: anything else written to file descriptor 1
    (the dev server's banner, the SDK core's log lines) goes to stderr instead."""
    global _output
    sys.stdout.flush()
    _output = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)


@dataclass(frozen=True)
class Measurement:
    bench: str
    metric: str
    value: float | None
    unit: str
    baseline: float | None = None
    ratio: float | None = None
    vs: str | None = None
    target: str | None = None
    met: bool | None = None
    note: str | None = None
    persistence: str | None = None


def measure(
    bench: str,
    metric: str,
    value: float | None,
    unit: str,
    *,
    baseline: float | None = None,
    vs: str | None = None,
    target: str | None = None,
    met: bool | None = None,
    note: str | None = None,
) -> Measurement:
    """A measurement; `ratio` is value / baseline when both are known and baseline is not 0."""
    ratio = None
    if value is not None and baseline:
        ratio = round(value / baseline, 3)
    return Measurement(
        bench=bench,
        metric=metric,
        value=_round(value),
        unit=unit,
        baseline=_round(baseline),
        ratio=ratio,
        vs=vs,
        target=target,
        met=met,
        note=note,
        persistence=PERSISTENCE.get(),
    )


def _round(value: float | None) -> float | None:
    if value is None:
        return None
    if abs(value) >= 100:
        return round(value, 1)
    return round(value, 4)


def emit(measurements: list[Measurement]) -> None:
    """Print the JSON lines, then the table, and flush (a bench may run for minutes)."""
    for item in measurements:
        print(json.dumps(asdict(item)), file=_output)
    print(file=_output)
    print(table(measurements), file=_output)
    print(file=_output, flush=True)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def table(measurements: list[Measurement]) -> str:
    header = [
        "bench",
        "store",
        "metric",
        "value",
        "unit",
        "vs",
        "baseline",
        "ratio",
        "target",
        "met",
    ]
    rows = [header]
    for m in measurements:
        cells = (
            m.bench,
            m.persistence,
            m.metric,
            m.value,
            m.unit,
            m.vs,
            m.baseline,
            m.ratio,
            m.target,
            m.met,
        )
        rows.append([_cell(cell) for cell in cells])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    notes = [f"  note [{m.metric}]: {m.note}" for m in measurements if m.note]
    return "\n".join(lines + notes)
