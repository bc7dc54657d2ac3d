"""`ruscope advise`'s function: the [advisor] section, the JSONL sample, the rows for a CSV, clear errors."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from advisor.verdict import WRITES
from collectors.config import ConfigError, load_config
from ruscope.advise import AdviseError, advice_text, advise_from_config
from store import read_table, store_location
from workloads.chat import generator as g

CONFIG = """
[cosmos]
endpoint = "http://127.0.0.1:8081/"
database = "chat"

[[queries]]
name = "tenant-day"
container = "query-logs"
sql = "SELECT * FROM c WHERE c.tenantId = @t AND c.date = @d"
parameters = { "@t" = "contoso", "@d" = "2026-12-09" }
rate_per_s = 6

[[queries]]
name = "errors"
container = "query-logs"
sql = "SELECT * FROM c WHERE c.status = 'error'"
rate_per_s = 1

[[queries]]
name = "elsewhere"
container = "messages"
sql = "SELECT * FROM c"

[advisor]
container = "query-logs"
sample = "logs.jsonl"
growth_gb_per_day = 1.0
scale = 1000
{extra}
[[advisor.candidates]]
key = "/tenantId"

[[advisor.candidates]]
key = ["/tenantId", "/sessionId"]

[[advisor.candidates]]
key = "{tenantId}-{createdAt:yyyy-MM}"
name = "tenant-month"
"""


def _write(tmp_path: Path, extra: str = "", docs: int = 600) -> Path:
    until = dt.datetime(2026, 12, 10, tzinfo=dt.UTC).timestamp()
    size = g.Size("advise", 20, 0, 0.0, backfill_days=20, backfill_turns_per_hour=2.0)
    turns = list(g.backfill_turns(g.DEFAULT_SEED, g.build_tenants(20), size, until))[:docs]
    (tmp_path / "logs.jsonl").write_text("".join(json.dumps(g.query_log_doc(t)) + "\n" for t in turns))
    path = tmp_path / "ruscope.toml"
    path.write_text(CONFIG.replace("{extra}", extra))
    return path


def test_advise_ranks_the_candidates_and_gives_rows_for_a_csv(tmp_path: Path) -> None:
    advice = advise_from_config(_write(tmp_path, "propose = 0"))
    names = [v.design.name for v in advice.verdicts]
    assert names[0] == "/tenantId,/sessionId" and set(names) == {"/tenantId", "/tenantId,/sessionId", "tenant-month"}
    tenant = next(v for v in advice.verdicts if v.design.name == "/tenantId")
    assert WRITES in tenant.flags
    assert [q.name for q in tenant.measure.queries] == ["tenant-day", "errors"]  # only query-logs' queries
    frame = advice.frame
    assert list(frame[frame.section == "design"].design) == names
    queries = frame[frame.section == "query"]
    assert len(queries) == 6 and set(queries.routing) <= {"single", "targeted", "fan-out"}
    hier_key = frame[(frame.section == "design") & (frame.design == names[0])].partition_key.iloc[0]
    assert json.loads(hier_key) == {"paths": ["/tenantId", "/sessionId"], "kind": "MultiHash", "version": 2}
    text = advice_text(advice)
    assert text.startswith("The sample:\n  ") and "a file, so its bias against the container is not measured" in text
    assert "\n\n1. /tenantId,/sessionId" in text and "fix 'errors' (fan-out)" in text


def test_proposed_designs_are_measured_beside_the_configured_ones_and_flagged(tmp_path: Path) -> None:
    advice = advise_from_config(_write(tmp_path))
    proposed = {p.design.name for p in advice.proposals}
    assert {"/sessionId", "/tenantId,/date"} <= proposed and len(proposed) <= 6
    assert not proposed & {"/tenantId", "/tenantId,/sessionId"}  # configured already: not proposed again
    designs = advice.frame[advice.frame.section == "design"]
    origin = dict(zip(designs.design, designs.origin, strict=True))
    assert origin["/tenantId"] == "configured" and origin["/sessionId"] == "proposed"
    assert all(designs[designs.origin == "proposed"].why.str.len() > 0)
    assert advice.verdicts[0].design.name == "/tenantId,/sessionId"  # still the winner among nine
    date = next(v for v in advice.verdicts if v.design.name == "/date")
    assert WRITES in date.flags  # proposed from the filter, flagged by the measure
    assert "proposed: in the equality filters of 'tenant-day'" in advice_text(advice)


LATEST = """
[[queries]]
name = "latest"
container = "query-logs"
sql = "SELECT TOP 5 c.tenantId, c.createdAt FROM c WHERE c.status = 'error' ORDER BY c.tenantId, c.createdAt DESC"
rate_per_s = 0.5

[advisor]"""


def test_the_winner_comes_with_its_definition_the_lint_and_the_migration(tmp_path: Path) -> None:
    path = _write(tmp_path, "propose = 0")
    path.write_text(path.read_text().replace("[advisor]", LATEST, 1))
    advice = advise_from_config(path)
    assert advice.definition is not None
    body = json.loads(advice.definition.json())
    assert body["id"] == "query-logs-by-tenantId-sessionId"
    assert body["partitionKey"] == {"paths": ["/tenantId", "/sessionId"], "kind": "MultiHash", "version": 2}
    assert body["indexingPolicy"]["compositeIndexes"] == [
        [{"path": "/tenantId", "order": "ascending"}, {"path": "/createdAt", "order": "descending"}]
    ]
    # the ORDER BY is served by the definition's composite index: only the unbounded fan-out is left
    assert [(f.query, f.code) for f in advice.lint] == [("errors", "cross-partition-unbounded")]
    latest = next(q for q in advice.verdicts[0].measure.queries if q.name == "latest")
    assert latest.routing == "fan-out" and latest.request_charge > 0
    text = advice_text(advice)
    assert "Container to create for /tenantId,/sessionId:" in text and '"kind": "MultiHash"' in text
    assert "Lint of the workload's queries on that container:" in text and "cross-partition-unbounded" in text
    assert "Migration (a partition key cannot be changed):" in text and "change feed" in text
    frame = advice.frame
    definition = frame[frame.section == "definition"]
    assert json.loads(definition[definition.step == 0].text.iloc[0]) == body
    migration = frame[frame.section == "migration"]
    assert list(migration.step) == list(range(1, len(advice.migration) + 1)) and len(migration) >= 5
    assert "retire" in migration.text.iloc[-1].lower()
    lint = frame[frame.section == "lint"]
    assert list(lint.code) == ["cross-partition-unbounded"] and lint.fix.iloc[0].startswith("Filter on the key")


def test_the_sample_option_overrides_the_config(tmp_path: Path) -> None:
    path = _write(tmp_path)
    (tmp_path / "other.jsonl").write_text("\n")
    with pytest.raises(AdviseError, match="other.jsonl: the document sample is empty"):
        advise_from_config(path, tmp_path / "other.jsonl")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("throughput = 100", r"advisor.throughput: Input should be greater than or equal to 400"),
        ("contianer = 'x'", r"advisor.contianer: Extra inputs are not permitted"),
    ],
)
def test_a_bad_advisor_section_is_located(tmp_path: Path, extra: str, message: str) -> None:
    path = _write(tmp_path, extra)
    with pytest.raises(AdviseError, match=message):
        advise_from_config(path)
    with pytest.raises(ConfigError, match=message):  # validated with the config: every command says it
        load_config(path)


def test_a_bad_sample_line_and_an_unknown_property_are_clear(tmp_path: Path) -> None:
    path = _write(tmp_path)
    (tmp_path / "bad.jsonl").write_text('{"id": "1"}\n[1, 2]\n')
    with pytest.raises(AdviseError, match=r"bad.jsonl:2: a document is a JSON object, not list"):
        advise_from_config(path, tmp_path / "bad.jsonl")
    (tmp_path / "one.jsonl").write_text('{"id": "1", "createdAt": "2026-12-01T00:00:00Z"}\n')
    with pytest.raises(AdviseError, match="'tenantId' is absent from every sample document"):
        advise_from_config(path, tmp_path / "one.jsonl")


def test_without_candidates_the_proposals_are_compared_and_with_neither_it_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path, "propose = 2")
    path.write_text(path.read_text()[: path.read_text().index("[[advisor.candidates]]")])
    advice = advise_from_config(path)
    assert [v.design.name for v in advice.verdicts] == ["/tenantId,/date", "/tenantId"]
    assert {p.design.name for p in advice.proposals} == {"/tenantId", "/tenantId,/date"}
    path.write_text(path.read_text().replace("propose = 2", "propose = 0"))
    with pytest.raises(AdviseError, match=r"ruscope.toml: advisor: nothing to compare: add \[\[advisor.candidates\]\]"):
        advise_from_config(path)


def test_no_advisor_section_says_what_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "ruscope.toml"
    path.write_text('[cosmos]\nendpoint = "http://127.0.0.1:8081/"\ndatabase = "chat"\n')  # valid, but no [advisor]
    with pytest.raises(AdviseError, match=r"no \[advisor\] section"):
        advise_from_config(path, tmp_path / "x.jsonl")


def test_ruscope_advise_in_a_real_process_prints_the_ranking_and_writes_the_csv(tmp_path: Path) -> None:
    import subprocess

    config = _write(tmp_path)
    assert load_config(config).advisor is not None  # the other commands still load a config with [advisor]
    ruscope = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "ruscope"
    out = tmp_path / "advice.csv"
    done = subprocess.run(
        [str(ruscope), "advise", "--config", str(config), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # the config's relative store (ruscope-data) lands here
    )
    assert done.returncode == 0, done.stderr
    assert "/tenantId" in done.stdout and f"{out}: " in done.stdout
    header = out.read_text().splitlines()[0]
    assert header.startswith("rank,design,") and len(out.read_text().splitlines()) > 3
    first = next(csv.DictReader(out.read_text().splitlines()))
    assert first["section"] == "design" and first["partitions"] == "3"  # 3, not 3.0 beside the blank cells
    designs = read_table(store_location(tmp_path / "ruscope-data"), "advice_designs")
    n = sum(1 for row in csv.DictReader(out.read_text().splitlines()) if row["section"] == "design")
    assert sorted(designs["rank"]) == list(range(1, n + 1)) and set(designs["container"]) == {"query-logs"}
    assert {"/tenantId", "/tenantId,/sessionId", "tenant-month"} <= set(designs["design"])
    winner = designs.set_index("rank").loc[1]
    assert json.loads(winner["definition"])["partitionKey"]["version"] == 2 and winner["migration"]
    queries = read_table(store_location(tmp_path / "ruscope-data"), "advice_queries")
    assert len(queries) == n * 2 and set(queries["query"]) == {"tenant-day", "errors"}
    shares = (
        read_table(store_location(tmp_path / "ruscope-data"), "advice_partitions")
        .groupby("design")["write_share"]
        .sum()
    )
    assert shares.round(6).eq(1.0).all() and len(shares) == n
    again = subprocess.run(
        [str(ruscope), "advise", "--config", str(config), "--no-store"], capture_output=True, text=True, cwd=tmp_path
    )
    assert again.returncode == 0 and "stored" not in again.stdout
    assert read_table(store_location(tmp_path / "ruscope-data"), "advice_designs")["run_id"].nunique() == 1
    bad = subprocess.run(
        [str(ruscope), "advise", "--config", str(tmp_path / "missing.toml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("ruscope: ") and len(bad.stderr.splitlines()) == 1


def test_a_synthetic_winner_is_linted_on_its_pk_with_the_keys_its_queries_derive(tmp_path: Path) -> None:
    path = _write(tmp_path, "propose = 0")
    text = path.read_text()
    pinned = (
        '\n[[queries]]\nname = "exact"\ncontainer = "query-logs"\n'
        'sql = "SELECT * FROM c WHERE c.tenantId = @t AND c.createdAt = @c"\n'
        'parameters = { "@t" = "contoso", "@c" = "2026-12-01T10:00:00Z" }\n\n[advisor]'
    )
    text = text.replace("[advisor]", pinned, 1)
    path.write_text(
        text[: text.index("[[advisor.candidates]]")]
        + '[[advisor.candidates]]\nkey = "{tenantId}-{createdAt:yyyy-MM}"\n'
    )
    advice = advise_from_config(path)
    assert advice.definition is not None and advice.definition.body["partitionKey"]["paths"] == ["/pk"]
    assert "Cosmos DB does not compute it" in advice.definition.notes[0]
    assert [(f.query, f.code) for f in advice.lint] == [
        ("tenant-day", "cross-partition-unbounded"),
        ("errors", "cross-partition-unbounded"),
    ]  # 'exact' pins tenantId and createdAt: its key is derived, so it is not flagged
    assert "c.pk = @pk" in advice.lint[0].fix
    assert "computing pk = '{tenantId}-{createdAt:yyyy-MM}'" in advice.migration[1]


def test_the_synthetic_key_property_is_configurable(tmp_path: Path) -> None:
    path = _write(tmp_path, 'propose = 0\nsynthetic_property = "partitionKey"')
    text = path.read_text()
    path.write_text(
        text[: text.index("[[advisor.candidates]]")]
        + '[[advisor.candidates]]\nkey = "{tenantId}-{createdAt:yyyy-MM}"\n'
    )
    advice = advise_from_config(path)
    [verdict] = advice.verdicts
    assert verdict.design.paths == ("/partitionKey",)
    assert advice.definition is not None and advice.definition.body["partitionKey"]["paths"] == ["/partitionKey"]
    assert all("c.partitionKey" in fix.fix and "c.pk" not in fix.fix for fix in verdict.fixes) and verdict.fixes
    assert any("partitionKey = '{tenantId}-{createdAt:yyyy-MM}'" in step for step in advice.migration)
    path.write_text(path.read_text().replace('synthetic_property = "partitionKey"', 'synthetic_property = "a/b"'))
    with pytest.raises(AdviseError, match=r"advisor.synthetic_property: String should match pattern"):
        advise_from_config(path)


@pytest.mark.parametrize("depth", [130, 100_000])  # braces: the document itself and its embedded levels
def test_a_sample_document_nested_deeper_than_the_service_allows_names_its_line(tmp_path: Path, depth: int) -> None:
    """Cosmos DB refuses a document nesting objects or arrays deeper than 128 levels; a deeper sample line
    (even one deep enough to exhaust Python's stack while parsing) is one clear error, not a RecursionError."""
    path = _write(tmp_path)
    deep = '{"a": ' * depth + "1" + "}" * depth
    (tmp_path / "deep.jsonl").write_text('{"id": "1", "tenantId": "t"}\n' + deep + "\n")
    with pytest.raises(AdviseError, match=r"deep.jsonl:2: the document nests objects or arrays deeper than 128"):
        advise_from_config(path, tmp_path / "deep.jsonl")


def test_a_document_at_the_nesting_limit_is_read(tmp_path: Path) -> None:
    from advisor.pipeline import read_sample

    deep = '{"a": ' * 129 + "1" + "}" * 129  # the document and 128 embedded objects, as the emulator stores
    (tmp_path / "ok.jsonl").write_text(deep + "\n")
    assert len(read_sample(tmp_path / "ok.jsonl")) == 1
