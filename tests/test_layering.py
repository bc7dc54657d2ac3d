"""The package layering of DESIGN.md, checked on the source: who may import whom, and how big a module gets.

- `wholefile` (files written whole or not at all) imports no other ruscope package: every package may use it;
- `cosmoscore` is pure Cosmos knowledge: it imports no other ruscope package and no `azure.*` client;
- `store` (the Delta Lake store and its schema, which collectors write and analysis reads) stands on
  `cosmoscore` and `wholefile` alone;
- `emulator` and `collectors` never import each other;
- `analysis` and `dashboard` import nothing from `emulator`;
- `ruscope` is the composition root: no library module imports it, nor does a benchmark (they measure the
  product packages, and the command only as a process);
- product code imports no SDK's private names (a leading underscore anywhere in the imported path);
- what crosses a wall is spelled once: only `cosmoscore.monitor` spells an Azure Monitor metric, dimension,
  Log Analytics table or column, and analysis names store columns only through the schema (`Table.pick`);
- size is a signal, not a gate: a module over LOOK_AT_MODULE_LINES is named in LOOKED_AT with its reason.
Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "wholefile",
    "cosmoscore",
    "store",
    "emulator",
    "collectors",
    "analysis",
    "dashboard",
    "advisor",
    "ruscope",
    "workloads",
)
FORBIDDEN = {
    "wholefile": set(PACKAGES) - {"wholefile"},
    "cosmoscore": set(PACKAGES) - {"cosmoscore"},
    "store": set(PACKAGES) - {"wholefile", "cosmoscore", "store"},
    "emulator": {"collectors", "analysis", "dashboard", "advisor", "ruscope", "workloads"},
    "collectors": {"emulator", "dashboard", "advisor", "ruscope", "workloads"},
    "analysis": {"emulator", "dashboard", "ruscope", "workloads"},
    "dashboard": {"emulator", "ruscope", "workloads"},
    "advisor": {"collectors", "dashboard", "ruscope", "workloads"},
    "workloads": {"ruscope", "dashboard"},
    "benchmarks": {"ruscope"},  # they measure product packages; the command only as a subprocess
}
LOOK_AT_MODULE_LINES, LOOK_AT_CLASS_LINES = 500, 300
# Modules or classes over the size that signals a look, each with why it is still one responsibility.
LOOKED_AT: dict[str, str] = {
    "emulator/engine/facade.py:Engine": "the facade: one short delegating method per domain operation (the API "
    "the REST layer, the demo and the advisor call), each documenting its arguments; the work is in the services "
    "it delegates to (catalog, items, batch, feeds, queries, users), each its own module",
    "store/records.py": "the store's schema, one responsibility: one record class per table (its fields and what "
    "each means, a few lines each) and the few lines that derive a table from a record; cutting it would scatter "
    "the schema that every reader names columns through",
    "emulator/history/aggregates.py:History": "the one lock around the per-minute cells: recording, retention, its "
    "two readers (`series` aggregates, `minute_entries` streams) and saving all take it; the pure parts are in "
    "cells.py, on_disk.py and changepoints.py",
}


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else []


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) for every import in a file, relative ones resolved against its package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return out


def _violations(package: str) -> list[str]:
    found = []
    for path in _modules(package):
        for line, module in _imported(path):
            top = module.split(".")[0]
            where = f"{path.relative_to(ROOT)}:{line} imports {module}"
            if top in FORBIDDEN.get(package, set()):
                found.append(where)
            if package == "cosmoscore" and top == "azure":
                found.append(where + " (cosmoscore is pure: no azure.* clients)")
            if top == "azure" and any(part.startswith("_") for part in module.split(".")):
                found.append(where + " (an SDK's private name)")
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_follow_the_layering(package: str) -> None:
    assert _violations(package) == []


def test_the_checker_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The rule must be able to fail: a function-level import and a relative import are both seen."""
    sample = ROOT / "cosmoscore" / "sql" / "parser.py"
    modules = [m for _, m in _imported(sample)]
    assert any(m.startswith("cosmoscore.sql.") for m in modules)  # `from . import ast` style, resolved
    routing = [m for _, m in _imported(ROOT / "cosmoscore" / "routing.py")]
    assert any(m.startswith("cosmoscore.sql") for m in routing)  # imported inside a function


@pytest.mark.parametrize("package", [p for p in PACKAGES if (ROOT / p).is_dir()])
def test_a_large_module_or_class_was_looked_at(package: str) -> None:
    """Size is a signal, not a gate: a module holds one responsibility, cut where it ends (never to get under a
    count). One over LOOK_AT_MODULE_LINES, or a class over LOOK_AT_CLASS_LINES, must be named in LOOKED_AT with
    the reason it is still one responsibility; a module that shrinks back is dropped from the list."""
    large = []
    for path in _modules(package):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        if text.count("\n") > LOOK_AT_MODULE_LINES:
            large.append(name)
        for node in ast.walk(ast.parse(text)):
            span = (node.end_lineno or 0) - node.lineno + 1 if isinstance(node, ast.ClassDef) else 0
            if span > LOOK_AT_CLASS_LINES:
                large.append(f"{name}:{node.name}")
    listed = sorted(k for k in LOOKED_AT if k.split("/")[0] == package)
    assert sorted(large) == listed, "name each large module or class in LOOKED_AT with its reason (or cut it)"


def _literal_column_lists(path: Path) -> list[tuple[int, list[str]]]:
    """(line, strings) of each module-level list or tuple literal of strings (starred names aside), also as the
    value of a module-level dict."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        values = [v for v in value.values if v is not None] if isinstance(value, ast.Dict) else [value]
        for value in values:
            if not isinstance(value, ast.List | ast.Tuple):
                continue
            strings = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            others = [e for e in value.elts if not isinstance(e, ast.Constant | ast.Starred)]
            if strings and not others:
                found.append((value.lineno, strings))
    return found


def _store_column_lists(package: str) -> list[str]:
    """Literal lists of two or more strings that are all columns of one store table: a copy of the schema."""
    from store import TABLES

    found = []
    for path in _modules(package):
        for line, strings in _literal_column_lists(path):
            tables = [t for t, spec in TABLES.items() if set(strings) <= set(spec.columns)]
            if len(strings) >= 2 and tables:
                found.append(f"{path.relative_to(ROOT)}:{line} {strings} (columns of {', '.join(tables)})")
    return found


def test_analysis_names_store_columns_through_the_schema() -> None:
    """The columns analysis reads are named with `Table.pick` (checked against the store's schema where they are
    named), never as a literal list that copies it and drifts."""
    assert _store_column_lists("analysis") == []


def test_the_column_list_rule_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('READ = ["run_id", "request_charge", *KEY]\nOWN = ["ru_share_pct", "gini"]\n')
    from store import TABLES

    flagged = [s for _, s in _literal_column_lists(sample) if set(s) <= set(TABLES["requests"].columns)]
    assert flagged == [["run_id", "request_charge"]]


EMULATOR_FLOORS = ("durability", "history", "engine", "rest", "monitor")  # emulator/__init__.py: downwards only


def test_the_emulators_sub_packages_depend_downwards_only() -> None:
    upward = []
    for floor, name in enumerate(EMULATOR_FLOORS):
        above = set(EMULATOR_FLOORS[floor + 1 :])
        for path in _modules(f"emulator/{name}"):
            for line, module in _imported(path):
                parts = module.split(".")
                if parts[0] == "emulator" and len(parts) > 1 and parts[1] in above:
                    upward.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert upward == []


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def _import_all(package: str) -> str:
    """One statement importing every module of a package (a folder under ROOT), its sub-packages included."""
    names = [".".join(path.relative_to(ROOT).with_suffix("").parts) for path in _modules(package)]
    return "import " + ", ".join(name.removesuffix(".__init__") for name in names)


@pytest.mark.parametrize("package", ["dashboard/figures", "analysis"])
def test_analysis_and_figures_load_neither_the_emulator_nor_the_sql_engine(package: str) -> None:
    loaded = _loaded_after(_import_all(package))
    assert [m for m in loaded if m.split(".")[0] in ("emulator", "lark") or m.startswith("cosmoscore.sql")] == []


def test_the_emulator_runs_without_the_collectors() -> None:
    loaded = _loaded_after("import emulator.cli, emulator.rest.server")
    assert [m for m in loaded if m.split(".")[0] in ("collectors", "ruscope")] == []


# The Azure Monitor catalogue (cosmoscore/monitor) is the one place a metric name, a metric dimension, a Log
# Analytics table, category or column is spelled; everyone else imports the constant, so the collectors and the
# stand-in cannot drift apart. Docstrings and comments are prose and may name them.
CATALOGUE = ROOT / "cosmoscore" / "monitor"
# Catalogue words that are also another contract's names, so the rule does not look for them: `AccountName`
# is a key of Azure Storage connection strings (the store's location), `Resource` a field of the emulator's
# error bodies.
SHARED_WORDS = frozenset({"AccountName", "Resource"})


def _catalogue_names() -> frozenset[str]:
    from cosmoscore.monitor import logs, metrics

    names = {*metrics.CATALOGUE, *metrics.DIMENSIONS, *logs.column_names(), *logs.TABLES, *logs.CATEGORIES}
    names |= {*logs.AGGREGATED, *logs.AGGREGATED_CATEGORIES}
    return frozenset(names | {logs.LEGACY_TABLE}) - SHARED_WORDS


def _docstrings(tree: ast.AST) -> set[int]:
    bodies = [
        n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    firsts = [b.body[0] for b in bodies if b.body]
    return {id(f.value) for f in firsts if isinstance(f, ast.Expr) and isinstance(f.value, ast.Constant)}


def _spelled(path: Path, names: frozenset[str]) -> list[str]:
    """Where `path` spells one of `names` as a string literal (or a keyword argument's name), docstrings aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            if id(node) not in prose:
                found.append(f"{where}:{node.lineno} spells {node.value!r}")
        elif isinstance(node, ast.keyword) and node.arg in names:
            found.append(f"{where}:{node.value.lineno} spells {node.arg!r} (a keyword)")
    return found


@pytest.mark.parametrize("package", list(dict.fromkeys((*PACKAGES, "store"))))
def test_only_the_catalogue_spells_azure_monitor_names(package: str) -> None:
    names = _catalogue_names()
    found = [hit for path in _modules(package) if CATALOGUE not in path.parents for hit in _spelled(path, names)]
    assert found == [], "import the name from cosmoscore.monitor instead"


def test_the_spelling_checker_finds_a_planted_literal(tmp_path: Path) -> None:
    """The rule must be able to fail: a literal and a keyword are seen; a docstring and a comment are not."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""NormalizedRUConsumption"""\n'
        "# TimeGenerated\n"
        'METRIC = "NormalizedRUConsumption"\n'
        "row = dict(TimeGenerated=0)\n"
        'def f():\n    """databasename_s"""\n    return {"querytext_s": 1}\n',
        encoding="utf-8",
    )
    found = _spelled(planted, _catalogue_names())
    assert [hit.split(" spells ")[1] for hit in found] == [
        "'NormalizedRUConsumption'",
        "'TimeGenerated' (a keyword)",
        "'querytext_s'",
    ]
    assert _spelled(CATALOGUE / "metrics.py", _catalogue_names())  # the catalogue itself does spell them
