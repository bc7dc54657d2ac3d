"""Where a check runs: the embedded emulator, created from `[[check.containers]]` and loaded from their
samples, or the account the config names (a real one, or an emulator already running).

The embedded emulator runs in this process on a free port with throttling off: a check measures what a
query costs, not how it contends, so the same data and queries give the same RU on every run and machine.
Its documents are written through the engine's domain API (no HTTP), which loads 20,000 in about a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.pipeline import AdviseError, read_sample
from collectors.config import Config
from collectors.config.check import CheckContainer
from emulator.engine import errors as engine_errors
from emulator.engine.facade import Engine
from emulator.engine.metering import Context
from emulator.engine.results import ThroughputSpec
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import RunningEmulator, start_in_thread

EMULATOR, ACCOUNT = "emulator", "account"


class CheckError(Exception):
    """A check that cannot run (a bad sample, a container the emulator refuses): exit 2, one line."""


@dataclass
class Target:
    """An endpoint with the config's database and containers, and the key to reach it."""

    kind: str
    endpoint: str
    credential: Any
    server: RunningEmulator | None = None
    documents: int = 0

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()

    @property
    def label(self) -> str:
        return f"the embedded emulator ({self.documents:,} documents)" if self.server else self.endpoint


def container_definition(container: CheckContainer) -> dict[str, Any]:
    """The container's resource as the service takes it: a hierarchical key is MultiHash (version 2)."""
    paths = container.key_paths
    definition: dict[str, Any] = {
        "id": container.id,
        "partitionKey": {"paths": paths, "kind": "MultiHash" if len(paths) > 1 else "Hash", "version": 2},
    }
    if container.indexing_policy is not None:
        definition["indexingPolicy"] = container.indexing_policy
    if container.unique_key_policy is not None:
        definition["uniqueKeyPolicy"] = container.unique_key_policy
    if container.default_ttl is not None:
        definition["defaultTtl"] = container.default_ttl
    return definition


def sample_path(container: CheckContainer, config_dir: Path, override: Path | None) -> Path | None:
    if override is not None:
        return override
    return None if container.sample is None else config_dir / container.sample


def start_embedded(config: Config, config_dir: Path, *, sample: Path | None = None) -> Target:
    """An emulator in this process with the check's containers, each loaded from its sample (`sample`
    overrides the first container's)."""
    if not config.check.containers:
        raise CheckError("check.containers: the embedded emulator needs at least one [[check.containers]]")
    database = config.account().databases[0]
    engine = Engine(throttling=False)
    ctx = Context()
    documents = 0
    try:
        engine.create_database(ctx, {"id": database})
        for n, container in enumerate(config.check.containers):
            where = f"check.containers.{n}"
            try:
                engine.create_container(
                    ctx,
                    database,
                    container_definition(container),
                    ThroughputSpec(container.throughput, autoscale=container.autoscale),
                )
            except engine_errors.CosmosError as exc:
                raise CheckError(f"{where}: the emulator refused the container: {exc.message}") from None
            path = sample_path(container, config_dir, sample if n == 0 else None)
            documents += _load(engine, ctx, database, container.id, path, where)
    except BaseException:
        engine.close()
        raise
    server = start_in_thread(engine)
    return Target(EMULATOR, server.url, WELL_KNOWN_KEY, server, documents)


def _load(engine: Engine, ctx: Context, database: str, container: str, path: Path | None, where: str) -> int:
    if path is None:
        return 0
    try:
        docs = read_sample(path)
    except AdviseError as exc:
        raise CheckError(f"{where}.sample: {exc}") from None
    for number, doc in enumerate(docs, start=1):
        try:
            engine.create_item(ctx, database, container, doc, upsert=True)
        except engine_errors.CosmosError as exc:
            raise CheckError(f"{path}: document {number} was refused: {exc.message}") from None
    return len(docs)
