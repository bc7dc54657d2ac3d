"""The AI-chat widget's data, deterministic from a seed (pure: no I/O, no clock, no emulator).

From the partition-key guides (seeds 002 and 003): a multi-tenant chat widget stores chat sessions, the
messages of each session (always read together: `/sessionId`) and a query log per question (per-tenant
analytics: `/tenantId`, the synthetic `{tenantId}-{yyyy-MM}` key, or the hierarchical `/tenantId`,
`/sessionId`). The tenant population is skewed as the guides warn: one large tenant (`contoso`) asks about
half of the questions, many small ones share the rest with a Zipf tail.

Everything comes from `random.Random` seeded with a string (stable across Python versions and runs), so
the same seed, size and minute give the same turns, ids and text: `GENERATOR_VERSION` changes whenever
that output changes, and the demo rebuilds its data when it does.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

GENERATOR_VERSION = 1
DEFAULT_SEED = 547
LARGE_TENANT = "contoso"
WELCOME_SESSION = "contoso-welcome"  # a session with a fixed id, for the example config's queries
LARGE_TENANT_SHARE = 0.5  # "if a large tenant generates 50% of the traffic, you have a hot partition"
STATUSES = ("ok", "error", "filtered")  # the poor key: three values, three logical partitions at most
STATUS_WEIGHTS = (0.94, 0.03, 0.03)
MODELS = ("gpt-4o-mini", "gpt-4o", "gpt-4.1-mini")
WORDS = [
    "order",
    "invoice",
    "refund",
    "shipping",
    "account",
    "password",
    "reset",
    "plan",
    "upgrade",
    "billing",
    "delivery",
    "tracking",
    "return",
    "warranty",
    "discount",
    "coupon",
    "subscription",
    "cancel",
    "address",
    "payment",
    "card",
    "error",
    "login",
    "support",
    "price",
    "stock",
    "size",
    "colour",
    "product",
    "manual",
    "install",
    "setup",
    "update",
    "version",
    "report",
    "export",
    "schedule",
    "meeting",
    "calendar",
    "the",
    "a",
    "to",
    "of",
    "and",
    "for",
    "with",
    "my",
    "your",
    "our",
    "is",
    "are",
    "can",
    "how",
    "what",
    "when",
    "where",
    "why",
    "please",
    "thanks",
]


@dataclass(frozen=True)
class Size:
    """How much data: the demo's full day, or a small one for tests."""

    name: str
    tenants: int
    history_minutes: int  # per-minute traffic history driven through the engine
    peak_turns_per_minute: float  # questions (each answered) per minute at the daily peak
    backfill_days: int  # older conversations loaded before the history (so logs span two months)
    backfill_turns_per_hour: float


SIZES = {
    "full": Size(
        "full",
        tenants=40,
        history_minutes=25 * 60,
        peak_turns_per_minute=12.0,
        backfill_days=35,
        backfill_turns_per_hour=8.0,
    ),
    "small": Size(
        "small", tenants=8, history_minutes=150, peak_turns_per_minute=6.0, backfill_days=2, backfill_turns_per_hour=6.0
    ),
}


@dataclass(frozen=True)
class Tenant:
    id: str
    weight: float  # share of the questions


@dataclass(frozen=True)
class Turn:
    """One question and its answer in a session, at `at` (epoch seconds)."""

    tenant_id: str
    session_id: str
    user_id: str
    order: int  # the turn's position in its session (a property named `order`: read it as c["order"])
    at: float
    question: str
    answer: str
    model: str
    status: str
    latency_ms: int


def build_tenants(count: int) -> tuple[Tenant, ...]:
    """`contoso` with half the weight, then `tenant-001`... sharing the other half as 1/rank (Zipf)."""
    ranks = [1.0 / (rank + 1) for rank in range(max(count - 1, 0))]
    total = sum(ranks) or 1.0
    small = [Tenant(f"tenant-{i + 1:03d}", (1 - LARGE_TENANT_SHARE) * r / total) for i, r in enumerate(ranks)]
    return (Tenant(LARGE_TENANT, LARGE_TENANT_SHARE if small else 1.0), *small)


def activity(at: float) -> float:
    """The day's shape, 0.2 at night to 1.0 at the 14:00 UTC peak (a widget on European sites)."""
    hour = (at % 86400) / 3600
    return 0.2 + 0.8 * max(0.0, math.sin(math.pi * (hour - 6) / 16)) if 6 <= hour <= 22 else 0.2


def turns_in_minute(seed: int, tenants: tuple[Tenant, ...], minute_start: float, rate: float) -> list[Turn]:
    """The questions asked in the minute starting at `minute_start`, `rate` on average (deterministic)."""
    rng = random.Random(f"chat:{seed}:{int(minute_start)}")
    count = int(rate) + (1 if rng.random() < rate - int(rate) else 0)
    weights = [t.weight for t in tenants]
    hour = dt.datetime.fromtimestamp(minute_start, dt.UTC).strftime("%Y%m%d%H")
    minute_of_hour = int(minute_start % 3600) // 60
    turns = []
    for index in range(count):
        tenant = rng.choices(tenants, weights)[0]
        slots = max(1, round(tenant.weight * 40))  # concurrent sessions of the tenant in this hour
        session = f"{tenant.id}-{hour}-{rng.randrange(slots):02d}"
        turns.append(
            Turn(
                tenant_id=tenant.id,
                session_id=session,
                user_id=f"{tenant.id}-user-{rng.randrange(slots * 5):03d}",
                order=minute_of_hour * 100 + index,
                at=minute_start + rng.uniform(0, 59),
                question=_text(rng, rng.lognormvariate(3.3, 0.6)),  # ~30 words, a long tail
                answer=_text(rng, rng.lognormvariate(5.0, 0.5)),  # ~150 words
                model=rng.choice(MODELS),
                status=rng.choices(STATUSES, STATUS_WEIGHTS)[0],
                latency_ms=int(rng.lognormvariate(7.0, 0.5)),
            )
        )
    return turns


def backfill_turns(seed: int, tenants: tuple[Tenant, ...], size: Size, until: float) -> Iterator[Turn]:
    """Older conversations: `size.backfill_days` before `until`, sampled every tenth minute."""
    start = (until // 600) * 600 - size.backfill_days * 86400
    for minute_start in range(int(start), int(until) - 599, 600):
        rate = size.backfill_turns_per_hour / 6 * activity(minute_start)
        yield from turns_in_minute(seed, tenants, float(minute_start), rate)


def welcome_session(seed: int, at: float, turns: int = 12) -> list[Turn]:
    """`contoso-welcome`: a session with a fixed id (the example config's conversation query reads it),
    one turn a minute from `at`."""
    rng = random.Random(f"chat-welcome:{seed}")
    return [
        Turn(
            tenant_id=LARGE_TENANT,
            session_id=WELCOME_SESSION,
            user_id=f"{LARGE_TENANT}-user-000",
            order=order,
            at=at + order * 60,
            question=_text(rng, rng.lognormvariate(3.3, 0.6)),
            answer=_text(rng, rng.lognormvariate(5.0, 0.5)),
            model=MODELS[0],
            status="ok",
            latency_ms=int(rng.lognormvariate(7.0, 0.5)),
        )
        for order in range(turns)
    ]


def message_docs(turn: Turn) -> tuple[dict[str, object], dict[str, object]]:
    """The question and the answer, as the `messages` container (`/sessionId`) stores them."""
    common = {"sessionId": turn.session_id, "tenantId": turn.tenant_id, "userId": turn.user_id, "order": turn.order}
    created = _iso(turn.at)
    question = {"id": f"{turn.session_id}-{turn.order:04d}-q", **common, "role": "user", "content": turn.question}
    answer = {"id": f"{turn.session_id}-{turn.order:04d}-a", **common, "role": "assistant", "content": turn.answer}
    question |= {"tokens": _tokens(turn.question), "createdAt": created}
    answer |= {"tokens": _tokens(turn.answer), "model": turn.model, "createdAt": _iso(turn.at + turn.latency_ms / 1000)}
    return question, answer


def query_log_doc(turn: Turn) -> dict[str, object]:
    """The question's log row: every design's key is a property (`tenantId`, `partitionKey`, `sessionId`,
    `status`), so the same document goes to each query-log container."""
    when = dt.datetime.fromtimestamp(turn.at, dt.UTC)
    return {
        "id": f"log-{turn.session_id}-{turn.order:04d}",
        "tenantId": turn.tenant_id,
        "sessionId": turn.session_id,
        "userId": turn.user_id,
        "partitionKey": synthetic_key(turn.tenant_id, turn.at),
        "month": when.strftime("%Y-%m"),
        "date": when.strftime("%Y-%m-%d"),
        "status": turn.status,
        "query": turn.question[:300],
        "model": turn.model,
        "promptTokens": _tokens(turn.question) + 350,  # the system prompt and the retrieved context
        "completionTokens": _tokens(turn.answer),
        "latencyMs": turn.latency_ms,
        "createdAt": _iso(turn.at),
    }


def synthetic_key(tenant_id: str, at: float) -> str:
    """`{tenantId}-{yyyy-MM}`: a tenant's month is one logical partition (seed 002's QueryLog.PartitionKey)."""
    return f"{tenant_id}-{dt.datetime.fromtimestamp(at, dt.UTC):%Y-%m}"


def _text(rng: random.Random, words: float) -> str:
    return " ".join(rng.choices(WORDS, k=max(3, min(int(words), 1500))))


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)  # about four characters per token in English


def _iso(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
