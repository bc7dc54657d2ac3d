"""The guides' case study on the chat generator's data, measured on the real engine in-process.

Messages: `/sessionId` wins. Query logs, one tenant making half of the traffic: `/tenantId` is flagged for
write skew (and the 20 GB limit); the hierarchical `/tenantId`, `/sessionId` fixes both and keeps per-tenant
queries targeted; the synthetic tenant-month key fixes the 20 GB ceiling and spreads the tenant over months,
but needs the months listed for a per-tenant query (and, measured, its current month is still the hot key);
`/status` is flagged for cardinality; `/date` for write skew.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from advisor.designs import Design, DesignError, parse_design
from advisor.measure import (
    Workload,
    WorkloadQuery,
    can_fork_safely,
    derived_key,
    gini,
    measure_design,
    measure_designs,
    order_by_indexes,
)
from advisor.verdict import ALIGNMENT, CARDINALITY, STORAGE, WRITES, Verdict, advise
from cosmoscore.routing import FAN_OUT, SINGLE
from workloads.chat import generator as g

UNTIL = dt.datetime(2026, 12, 10, tzinfo=dt.UTC).timestamp()
TENANT_MONTH = "{tenantId}-{createdAt:yyyy-MM}"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def turns() -> list[g.Turn]:
    """40 days of conversations of 40 tenants (contoso asks half of the questions), about 1,000 turns."""
    size = g.Size("advisor", 40, 0, 0.0, backfill_days=40, backfill_turns_per_hour=2.0)
    return list(g.backfill_turns(g.DEFAULT_SEED, g.build_tenants(40), size, UNTIL))


@pytest.fixture(scope="module")
def logs(turns: list[g.Turn]) -> list[dict[str, Any]]:
    return [g.query_log_doc(t) for t in turns]


@pytest.fixture(scope="module")
def log_workload(turns: list[g.Turn]) -> Workload:
    last = turns[-1]
    return Workload(
        queries=(
            WorkloadQuery(
                "tenant-day",
                "SELECT * FROM c WHERE c.tenantId = @t AND c.date = @d",
                {"@t": g.LARGE_TENANT, "@d": "2026-12-09"},
                6,
            ),
            WorkloadQuery(
                "session",
                "SELECT * FROM c WHERE c.tenantId = @t AND c.sessionId = @s",
                {"@t": last.tenant_id, "@s": last.session_id},
                3,
            ),
            WorkloadQuery("errors", "SELECT * FROM c WHERE c.status = 'error'", {}, 1),
        ),
        growth_gb_per_day=1.0,
        scale=1000,
    )


@pytest.fixture(scope="module")
def log_verdicts(logs: list[dict[str, Any]], log_workload: Workload) -> dict[str, Verdict]:
    specs: list[Any] = ["/tenantId", TENANT_MONTH, ["/tenantId", "/sessionId"], "/status", "/date"]
    return {v.design.name: v for v in advise([parse_design(s) for s in specs], logs, log_workload)}


def test_messages_the_session_key_wins(turns: list[g.Turn]) -> None:
    docs = [d for t in turns for d in g.message_docs(t)]
    session, user = turns[-1].session_id, turns[-1].user_id
    workload = Workload(
        queries=(
            WorkloadQuery(
                "conversation", 'SELECT * FROM c WHERE c.sessionId = @s ORDER BY c["order"]', {"@s": session}, 90
            ),
            WorkloadQuery("user", "SELECT * FROM c WHERE c.userId = @u", {"@u": user}, 10),
        ),
        growth_gb_per_day=0.5,
    )
    verdicts = advise([parse_design(s) for s in ("/tenantId", "/userId", "/sessionId")], docs, workload)
    best = verdicts[0]
    assert (best.design.name, best.rank, best.flags) == ("/sessionId", 1, ())
    assert best.measure.queries[0].routing == SINGLE
    tenant = next(v for v in verdicts if v.design.name == "/tenantId")
    assert WRITES in tenant.flags and ALIGNMENT in tenant.flags


def test_tenant_key_is_flagged_for_write_skew_and_the_20_gb_limit(log_verdicts: dict[str, Verdict]) -> None:
    tenant = log_verdicts["/tenantId"]
    assert WRITES in tenant.flags and STORAGE in tenant.flags
    assert tenant.measure.hottest_logical_share > 0.45  # contoso: half of all writes in one logical partition
    assert tenant.measure.days_to_limit is not None and tenant.measure.days_to_limit < 60
    assert "write skew" in tenant.summary


def test_hierarchical_key_fixes_the_skew_and_keeps_tenant_queries_targeted(log_verdicts: dict[str, Verdict]) -> None:
    hier = log_verdicts["/tenantId,/sessionId"]
    assert WRITES not in hier.flags and STORAGE not in hier.flags and CARDINALITY not in hier.flags
    assert hier.rank == 1
    routing = {q.name: q.routing for q in hier.measure.queries}
    assert routing["tenant-day"] != FAN_OUT and routing["session"] == SINGLE
    assert hier.measure.cardinality[0] < hier.measure.cardinality[1]  # tenants, then tenant-sessions
    assert [f.query for f in hier.fixes] == ["errors"]
    assert "hierarchical prefix" in hier.fixes[0].fix and "add TOP" in hier.fixes[0].fix


def test_synthetic_key_fixes_the_20_gb_limit_but_needs_the_months_listed(
    log_verdicts: dict[str, Verdict], logs: list[dict[str, Any]], log_workload: Workload
) -> None:
    synthetic, tenant = log_verdicts[TENANT_MONTH], log_verdicts["/tenantId"]
    assert STORAGE not in synthetic.flags and synthetic.measure.days_to_limit is None
    assert synthetic.measure.hottest_logical_share < tenant.measure.hottest_logical_share - 0.05
    assert synthetic.measure.cardinality[0] > tenant.measure.cardinality[0]
    per_tenant = next(q for q in synthetic.measure.queries if q.name == "tenant-day")
    assert per_tenant.routing == FAN_OUT
    fix = next(f.fix for f in synthetic.fixes if f.query == "tenant-day")
    assert "c.pk IN ('contoso-2026-10', 'contoso-2026-11', 'contoso-2026-12')" in fix
    # the fix, applied: the months listed make the per-tenant query targeted again
    listed = WorkloadQuery(
        "tenant-months",
        "SELECT * FROM c WHERE c.tenantId = @t AND c.date = @d"
        " AND c.pk IN ('contoso-2026-10', 'contoso-2026-11', 'contoso-2026-12')",
        {"@t": g.LARGE_TENANT, "@d": "2026-12-09"},
    )
    fixed = measure_design(synthetic.design, logs, Workload(queries=(listed,), scale=log_workload.scale))
    assert fixed.queries[0].routing != FAN_OUT and fixed.queries[0].partitions < per_tenant.partitions
    assert fixed.queries[0].request_charge <= per_tenant.request_charge


def test_synthetic_key_current_month_is_still_the_hot_key(log_verdicts: dict[str, Verdict]) -> None:
    """Measured, not assumed: within a month the large tenant's writes all go to its month's key."""
    synthetic = log_verdicts[TENANT_MONTH]
    assert WRITES in synthetic.flags
    assert "time bucket moves the hot key" in synthetic.summary


def test_status_is_flagged_for_cardinality(log_verdicts: dict[str, Verdict]) -> None:
    status = log_verdicts["/status"]
    assert CARDINALITY in status.flags and status.measure.cardinality == (3,)
    assert status.rank == len(log_verdicts)


def test_date_is_flagged_for_write_skew(log_verdicts: dict[str, Verdict]) -> None:
    date = log_verdicts["/date"]
    assert WRITES in date.flags and CARDINALITY not in date.flags and STORAGE not in date.flags
    assert date.measure.recent_hottest_logical_share == 1.0  # all of today's writes on today's key


def test_a_query_pinning_every_template_property_is_routed_to_one_key(logs: list[dict[str, Any]]) -> None:
    design = parse_design(TENANT_MONTH)
    at = logs[0]["createdAt"]
    query = WorkloadQuery("one", "SELECT * FROM c WHERE c.tenantId = 'contoso' AND c.createdAt = @at", {"@at": at})
    assert derived_key(design, query) == (f"contoso-{at[:7]}",)
    measured = measure_design(design, logs, Workload(queries=(query,)))
    assert measured.queries[0].routing == SINGLE and measured.queries[0].partition_key == (f"contoso-{at[:7]}",)


def test_write_shares_sum_to_one_and_gini_is_zero_when_even(logs: list[dict[str, Any]]) -> None:
    measured = measure_design(parse_design("/id"), logs, Workload(throughput=30_000))
    assert measured.partitions == 5 and sum(measured.write_shares) == pytest.approx(1.0)
    assert gini([0.25] * 4) == pytest.approx(0.0) and gini([1.0, 0, 0, 0]) == pytest.approx(0.75)


def test_entity_rates_weight_the_writes(logs: list[dict[str, Any]]) -> None:
    quiet = Workload(entity_property="tenantId", entity_rates={g.LARGE_TENANT: 0.01})
    measured = measure_design(parse_design("/tenantId"), logs, quiet)
    assert measured.hottest_logical_share < 0.3


def test_bad_inputs_are_clear_errors(logs: list[dict[str, Any]]) -> None:
    with pytest.raises(DesignError, match="sample is empty"):
        measure_design(parse_design("/tenantId"), [], Workload())
    with pytest.raises(DesignError, match="'tenant' is absent"):
        measure_design(parse_design("{tenant}-{createdAt:yyyy-MM}"), logs, Workload())
    assert isinstance(parse_design("/tenantId"), Design)


def test_the_sample_is_loaded_up_to_the_projected_scale_for_query_costs(logs: list[dict[str, Any]]) -> None:
    query = WorkloadQuery("tenant", "SELECT * FROM c WHERE c.tenantId = 'tenant-001'")
    once = measure_design(parse_design("/tenantId"), logs, Workload(queries=(query,), scale=1000))
    thrice = measure_design(parse_design("/tenantId"), logs, Workload(queries=(query,), scale=3, max_load_copies=5))
    assert (once.loaded_documents, thrice.loaded_documents) == (len(logs), 3 * len(logs))
    assert thrice.queries[0].request_charge > 2 * once.queries[0].request_charge
    assert thrice.hottest_logical_share == once.hottest_logical_share  # copies keep the keys' shares


def test_a_time_property_that_is_not_a_date_is_a_clear_error(logs: list[dict[str, Any]]) -> None:
    with pytest.raises(DesignError, match="time property 'status'"):
        measure_design(parse_design("/tenantId"), logs, Workload(time_property="status"))


def test_measure_designs_in_processes_gives_the_figures_of_one_by_one(
    logs: list[dict[str, Any]], log_workload: Workload
) -> None:
    designs = [parse_design(s) for s in ("/tenantId", TENANT_MONTH, ["/tenantId", "/sessionId"])]
    assert measure_designs(designs, logs, log_workload, workers=2) == [
        measure_design(d, logs, log_workload) for d in designs
    ]
    with pytest.raises(DesignError, match="nope"):
        measure_designs([parse_design("/nope"), *designs], logs, log_workload, workers=2)


FORKED = """
import json, sys
from advisor.designs import parse_design
from advisor.measure import can_fork_safely, measure_design, measure_designs
from tests.advisor.test_measure import TENANT_MONTH, UNTIL, Workload, g

size = g.Size("advisor", 40, 0, 0.0, backfill_days=5, backfill_turns_per_hour=2.0)
logs = [g.query_log_doc(t) for t in g.backfill_turns(g.DEFAULT_SEED, g.build_tenants(40), size, UNTIL)]
designs = [parse_design(s) for s in ("/tenantId", TENANT_MONTH)]
assert can_fork_safely()
forked = measure_designs(designs, logs, Workload(), workers=2)
print(json.dumps(forked == [measure_design(d, logs, Workload()) for d in designs]))
"""


def test_the_forked_workers_of_a_single_threaded_process_give_the_figures_of_one_by_one() -> None:
    """Only a process running no other thread forks (this test process runs the suite's emulator threads)."""
    done = subprocess.run([sys.executable, "-c", FORKED], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "true"), done.stderr


INTERRUPTED = """
import os, time
import advisor.measure as measure
from advisor.designs import parse_design

def slow(design, docs, workload, limits=None):  # each worker says it started, then works for a minute
    os.write(1, b"measuring\\n")  # one write: the two workers' lines never interleave
    time.sleep(60)

measure.measure_design = slow  # inherited by the forked workers
try:
    measure.measure_designs([parse_design("/a"), parse_design("/b")], [{"id": "1", "a": 1, "b": 2}], measure.Workload(), workers=2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl+C as a signal to the process group")
def test_ctrl_c_while_forked_workers_measure_prints_no_worker_traceback() -> None:
    """Ctrl+C reaches the terminal's whole process group: the parent stops the pool, the workers print
    nothing (each used to print a `ForkPoolWorker ... KeyboardInterrupt` traceback)."""
    import os
    import signal

    process = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        started = [process.stdout.readline() for _ in range(2)]  # type: ignore[union-attr]
        assert started == ["measuring\n"] * 2
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert (process.returncode, out, err) == (0, "interrupted\n", "")


@pytest.mark.timeout(60)
def test_a_process_running_other_threads_measures_in_itself(logs: list[dict[str, Any]]) -> None:
    """A fork copies only the calling thread: a lock another thread holds at that moment stays locked in the
    child for ever (the demo advises while its emulator serves on threads, and hung so). Here a thread holds
    the SQL parse cache's lock for half a second: forked workers would wait on it for ever; in this process
    the measure waits the half second and ends."""
    from cosmoscore.sql import parser

    taken, holder = threading.Event(), None

    def hold() -> None:
        with parser._PARSED._lock:  # a lock every measure takes (test-only access to a private name)
            taken.set()
            time.sleep(0.5)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    taken.wait(10)
    assert not can_fork_safely()
    designs = [parse_design("/tenantId"), parse_design(TENANT_MONTH)]
    queries = Workload(queries=(WorkloadQuery("one", "SELECT * FROM c WHERE c.tenantId = 'x'"),))
    assert measure_designs(designs, logs, queries, workers=2) == [measure_design(d, logs, queries) for d in designs]
    holder.join()


def test_a_multi_property_order_by_is_measured_on_its_composite_index(logs: list[dict[str, Any]]) -> None:
    sql = "SELECT TOP 5 c.tenantId FROM c WHERE c.status = 'error' ORDER BY c.tenantId ASC, c.createdAt DESC"
    workload = Workload(queries=(WorkloadQuery("latest", sql),))
    assert order_by_indexes(workload.queries) == [
        [{"path": "/tenantId", "order": "ascending"}, {"path": "/createdAt", "order": "descending"}]
    ]
    (query,) = measure_design(parse_design("/tenantId"), logs, workload).queries
    assert query.routing == FAN_OUT and query.request_charge > 0


def test_the_projected_size_adds_the_partitions_the_service_would_split_into(logs: list[dict[str, Any]]) -> None:
    """400 RU/s is one partition; a sample projected to ~120 GB needs three (one per 50 GB, P2/P8)."""
    from advisor.measure import layout_throughput
    from cosmoscore.limits import GB, Limits

    sample_bytes = sum(len(json.dumps(d, default=str).encode()) for d in logs)
    scale = 120 * GB / sample_bytes
    small = measure_design(parse_design("/tenantId"), logs, Workload(throughput=400))
    large = measure_design(parse_design("/tenantId"), logs, Workload(throughput=400, scale=scale))
    assert (small.partitions, large.partitions) == (1, 3)
    assert layout_throughput(logs, Workload(throughput=30_000, scale=scale), Limits()) == 30_000  # RU/s decide
