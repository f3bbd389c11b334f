"""Synthetic telemetry for the incidents scenario: five services, 13:00-15:00 UTC on 2024-05-14.

The planted root cause: payments-service deploy v2.14.0 at 13:58 lowered its database connection
pool (db.pool.max_connections 50 -> 5). From 14:00 charges wait for a connection, time out after
2000 ms, and checkout-service (which calls payments-service) answers with 5xx.

The decoys: inventory-service, also a dependency of checkout-service, was deployed at 13:40 with a
cache change and nothing broke; search-service, outside the checkout path, spiked to 92% CPU at
14:05 when a config change moved its reindex job.

Every value is generated from the small tables below, so the data is the same on every run.
"""

from __future__ import annotations

from pydantic import BaseModel

DAY = "2024-05-14"
WINDOW_START, WINDOW_END = 13 * 60, 15 * 60  # minutes after midnight, UTC
STEP_MINUTES = 5
DEFAULT_SPLIT = 14 * 60  # the incident was reported at 15:00: the last hour vs the one before

CHECKOUT, PAYMENTS, INVENTORY = "checkout-service", "payments-service", "inventory-service"
GATEWAY, SEARCH = "api-gateway", "search-service"
SERVICES = (GATEWAY, CHECKOUT, PAYMENTS, INVENTORY, SEARCH)
DEPENDENCIES: dict[str, tuple[str, ...]] = {
    GATEWAY: (CHECKOUT, SEARCH),
    CHECKOUT: (PAYMENTS, INVENTORY),
    PAYMENTS: (),
    INVENTORY: (),
    SEARCH: (),
}
PLANTED_CAUSE: dict[str, str] = {GATEWAY: PAYMENTS, CHECKOUT: PAYMENTS, PAYMENTS: PAYMENTS}
"""The cause the data plants behind a symptom of each service on the checkout path (the
payments-service deploy); the decoys are never it."""
ALIASES: dict[str, str] = {
    "api gateway": GATEWAY,
    "gateway": GATEWAY,
    "checkout service": CHECKOUT,
    "checkout": CHECKOUT,
    "payments service": PAYMENTS,
    "payment service": PAYMENTS,
    "payments": PAYMENTS,
    "payment": PAYMENTS,
    "inventory service": INVENTORY,
    "inventory": INVENTORY,
    "search service": SEARCH,
    "search": SEARCH,
}

ERROR_RATE, P99, CPU, REQUESTS = (
    "error_rate_5xx_percent",
    "p99_latency_ms",
    "cpu_percent",
    "requests_per_min",
)
METRICS = (ERROR_RATE, P99, CPU, REQUESTS)


class Deployment(BaseModel):
    time: str
    service: str
    version: str
    previous_version: str
    author: str
    summary: str


class ConfigChange(BaseModel):
    time: str
    service: str
    key: str
    old: str
    new: str
    change_id: str
    via: str


class LogLine(BaseModel):
    time: str
    service: str
    level: str
    message: str


class Span(BaseModel):
    span_id: str
    parent_id: str | None
    service: str
    operation: str
    duration_ms: int
    error: bool = False


class Trace(BaseModel):
    trace_id: str
    time: str
    spans: list[Span]


def clock(minute: int, second: int = 0) -> str:
    text = f"{minute // 60:02d}:{minute % 60:02d}"
    return f"{text}:{second:02d}" if second else text


def minute_of(time: str) -> int:
    """Minutes after midnight of 'HH:MM' or 'HH:MM:SS' (seconds are dropped)."""
    hours, minutes = time.split(":")[:2]
    return int(hours) * 60 + int(minutes)


# (baseline, [(from, to, value)]): the value of a metric, overridden in [from, to).
_Profile = tuple[float, list[tuple[int, int, float]]]
_INCIDENT = (14 * 60, WINDOW_END)
_REINDEX = (14 * 60 + 5, 14 * 60 + 25)
_PROFILES: dict[str, dict[str, _Profile]] = {
    GATEWAY: {
        ERROR_RATE: (0.3, [(*_INCIDENT, 2.2)]),
        P99: (260, [(*_INCIDENT, 2150)]),
        CPU: (40, []),
        REQUESTS: (1200, []),
    },
    CHECKOUT: {
        ERROR_RATE: (0.2, [(*_INCIDENT, 8.1)]),
        P99: (320, [(*_INCIDENT, 2080)]),
        CPU: (35, []),
        REQUESTS: (300, []),
    },
    PAYMENTS: {
        ERROR_RATE: (0.1, [(*_INCIDENT, 4.6)]),
        P99: (180, [(*_INCIDENT, 2010)]),
        CPU: (30, [(*_INCIDENT, 18)]),
        REQUESTS: (290, []),
    },
    INVENTORY: {
        ERROR_RATE: (0.1, []),
        P99: (45, []),
        CPU: (25, []),
        REQUESTS: (600, []),
    },
    SEARCH: {
        ERROR_RATE: (0.2, []),
        P99: (210, [(*_REINDEX, 300)]),
        CPU: (30, [(*_REINDEX, 92)]),
        REQUESTS: (800, []),
    },
}
_JITTER = (0.0, 0.04, -0.03, 0.02, -0.05, 0.03, -0.01, 0.05, -0.02, 0.01, -0.04, 0.02)


def metric_points(service: str, metric: str) -> list[tuple[str, float]]:
    """(time, value) every five minutes of the window; each value covers the next five minutes."""
    baseline, overrides = _PROFILES[service][metric]
    offset = SERVICES.index(service) * 3 + METRICS.index(metric)
    points = []
    for index, minute in enumerate(range(WINDOW_START, WINDOW_END, STEP_MINUTES)):
        value = next((v for start, end, v in overrides if start <= minute < end), baseline)
        jittered = value * (1 + _JITTER[(index + offset) % len(_JITTER)])
        points.append((clock(minute), round(jittered, 1 if jittered < 100 else 0)))
    return points


DEPLOYMENTS = (
    Deployment(
        time="13:40",
        service=INVENTORY,
        version="v5.3.1",
        previous_version="v5.3.0",
        author="ci-bot",
        summary="longer stock cache TTL",
    ),
    Deployment(
        time="13:58",
        service=PAYMENTS,
        version="v2.14.0",
        previous_version="v2.13.2",
        author="m.keller",
        summary="move database settings to the shared config",
    ),
    Deployment(
        time="14:30",
        service=GATEWAY,
        version="v1.31.0",
        previous_version="v1.30.4",
        author="ci-bot",
        summary="access-log format",
    ),
)

CONFIG_CHANGES = (
    ConfigChange(
        time="13:40",
        service=INVENTORY,
        key="cache.ttl_seconds",
        old="300",
        new="600",
        change_id="CHG-2287",
        via="deploy v5.3.1",
    ),
    ConfigChange(
        time="13:58",
        service=PAYMENTS,
        key="db.pool.max_connections",
        old="50",
        new="5",
        change_id="CHG-2291",
        via="deploy v2.14.0",
    ),
    ConfigChange(
        time="14:05",
        service=SEARCH,
        key="reindex.schedule",
        old="0 3 * * *",
        new="*/60 * * * *",
        change_id="CHG-2293",
        via="config console",
    ),
)


def _log_lines() -> list[LogLine]:
    lines: list[LogLine] = []

    def add(time: str, service: str, level: str, message: str) -> None:
        lines.append(LogLine(time=time, service=service, level=level, message=message))

    declined = ("13:07:14", "13:22:14", "13:41:14", "13:55:14", "14:12:14", "14:31:14", "14:48:14")
    for number, time in enumerate(declined):
        add(time, CHECKOUT, "ERROR", f"card declined by issuer for order ord-{48100 + number}")
    for time in ("13:15:00", "13:45:00", "14:15:00", "14:45:00"):
        add(time, INVENTORY, "WARN", "stock cache miss rate 22% above threshold 20%")
    add("13:40:05", INVENTORY, "INFO", "started inventory-service v5.3.1 (cache.ttl_seconds=600)")
    add(
        "13:58:40", PAYMENTS, "INFO", "started payments-service v2.14.0 (db.pool.max_connections=5)"
    )
    add("14:05:02", SEARCH, "INFO", "reindex job started (schedule */60 * * * *)")
    add("14:25:11", SEARCH, "INFO", "reindex job finished in 1180 s")
    for step, minute in enumerate(range(_INCIDENT[0], WINDOW_END)):
        waiting = 30 + (step * 7) % 19
        pool = f"pool payments-db within 2000 ms (max_connections=5, in_use=5, waiting={waiting})"
        add(
            clock(minute, 10),
            PAYMENTS,
            "ERROR",
            f"ConnectionPoolTimeoutError: no connection from {pool}",
        )
        add(
            clock(minute, 31),
            CHECKOUT,
            "ERROR",
            f"payment authorization failed for order ord-{48200 + step}: timeout after 2000 ms "
            "calling payments-service POST /v1/charges",
        )
        if step % 2 == 0:
            slow = f"slow request POST /v1/charges took {2000 + waiting} ms"
            add(clock(minute, 45), PAYMENTS, "WARN", slow)
            upstream = "upstream checkout-service answered 502 for POST /api/checkout"
            add(clock(minute, 50), GATEWAY, "WARN", upstream)
    return sorted(lines, key=lambda line: (line.time, line.service))


LOGS: tuple[LogLine, ...] = tuple(_log_lines())


# (parent row or None, service, operation, duration in ms, error) per span, parents first.
_SpanRow = tuple[int | None, str, str, int, bool]


def _trace(trace_id: str, time: str, rows: list[_SpanRow]) -> Trace:
    spans = [
        Span(
            span_id=f"{trace_id}-{row}",
            parent_id=None if parent is None else f"{trace_id}-{parent}",
            service=service,
            operation=operation,
            duration_ms=duration,
            error=error,
        )
        for row, (parent, service, operation, duration, error) in enumerate(rows)
    ]
    return Trace(trace_id=trace_id, time=time, spans=spans)


def _checkout_trace(index: int, minute: int) -> Trace:
    """Gateway -> checkout -> (inventory, payments -> pool, query). From 14:00 the pool wait runs
    into checkout's 2000 ms client timeout and the query never starts."""
    broken = minute >= _INCIDENT[0]
    acquire, query = (1960 + index * 10, 0) if broken else (2, 95 + index * 4)
    charge = 2000 if broken else acquire + query + 23
    stock = 25 + (minute + index) % 6
    checkout = charge + stock + 20
    rows: list[_SpanRow] = [
        (None, GATEWAY, "POST /api/checkout", checkout + 8, broken),
        (0, CHECKOUT, "POST /checkout", checkout, broken),
        (1, INVENTORY, "GET /v1/stock", stock, False),
        (1, PAYMENTS, "POST /v1/charges", charge, broken),
        (3, PAYMENTS, "db.pool.acquire", acquire, broken),
    ]
    if not broken:
        rows.append((3, PAYMENTS, "db.query INSERT charges", query, False))
    return _trace(f"tr-{minute:04d}-{index}", clock(minute, 20 * index), rows)


def _search_trace(minute: int) -> Trace:
    query = 150 if _REINDEX[0] <= minute < _REINDEX[1] else 90 + minute % 7
    rows: list[_SpanRow] = [
        (None, GATEWAY, "GET /api/search", query + 36, False),
        (0, SEARCH, "GET /search", query + 30, False),
        (1, SEARCH, "es.query", query, False),
    ]
    return _trace(f"tr-{minute:04d}-s", clock(minute, 40), rows)


TRACES: tuple[Trace, ...] = tuple(
    trace
    for minute in range(WINDOW_START, WINDOW_END, STEP_MINUTES)
    for trace in (_checkout_trace(0, minute), _checkout_trace(1, minute), _search_trace(minute))
)


def find_service(name: str) -> str | None:
    key = name.strip().lower()
    return key if key in SERVICES else ALIASES.get(key)


def dependencies_of(service: str) -> list[str]:
    """`service` and every service it calls, directly or not, in breadth-first order."""
    found = [service]
    for current in found:
        found += [dep for dep in DEPENDENCIES[current] if dep not in found]
    return found
