"""Advice on a live container, end to end: sample it through the SDK (`collectors.sample`), measure and
judge the designs (`ruscope.advise`), store the advice (`ruscope.advise_store`). What `ruscope advise
--from-account` does in steps, as one call for the demo and the tests' stores, which hold a parsed
`Config` rather than a file."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from collectors.config import Config
from collectors.sample import sample_container
from ruscope.advise import Advice, AdvisorSettings, advise_documents, read_sample, workload_of, workload_queries
from ruscope.advise_store import AdviceScope, advice_frames, store_advice
from store import StoreLocation


def advise_live(
    cfg: Config,
    settings: AdvisorSettings,
    *,
    store: StoreLocation,
    sample_path: Path,
    now: datetime,
    account: str | None = None,
    max_documents: int = 2_000,
    budget_ru: float = 5_000,
    credential: Any = None,
) -> tuple[Advice, str]:
    """Sample `settings.container` of the account (the first, or `account`; its first database) into
        `sample_path`, advise on it and store the advice at `now`; the advice and its run id. Raises what
        `sample_container` (SampleError) and `advise_documents` (AdviseError) raise. `credential`: a key or
    token credential (else the account's, from the environment)."""
    target = cfg.account(account)
    database = target.databases[0]
    report = sample_container(
        target,
        database,
        settings.container,
        max_documents=max_documents,
        budget_ru=budget_ru,
        out_path=sample_path,
        credential=credential,
    )
    workload = workload_of(settings, workload_queries(cfg, settings.container))
    advice = advise_documents(settings, workload, read_sample(report.path))
    return advice, store_advice(store, advice_frames(advice, AdviceScope.of(target, settings), now), time=now)
