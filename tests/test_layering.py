"""The package layering of DESIGN.md, checked on the source: who may import whom, and how big a module gets.

- `wholefile` (files written whole or not at all) imports no other ruscope package: every package may use it;
- `cosmoscore` is pure Cosmos knowledge: it imports no other ruscope package and no `azure.*` client;
- `store` (the Delta Lake store and its schema, which collectors write and analysis reads) stands on
  `cosmoscore` and `wholefile` alone;
- `emulator` and `collectors` never import each other;
- `analysis` and `dashboard` import nothing from `emulator`;
- `ruscope` is the composition root: no library module imports it;
- product code imports no SDK's private names (a leading underscore anywhere in the imported path).
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
}
LOOK_AT_MODULE_LINES, LOOK_AT_CLASS_LINES = 500, 300
# Modules or classes over the size that signals a look, each with why it is still one responsibility.
LOOKED_AT: dict[str, str] = {}


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
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                if node.end_lineno - node.lineno + 1 > LOOK_AT_CLASS_LINES:
                    large.append(f"{name}:{node.name}")
    listed = sorted(k for k in LOOKED_AT if k.split("/")[0] == package)
    assert sorted(large) == listed, "name each large module or class in LOOKED_AT with its reason (or cut it)"


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("statement", ["import dashboard.figures", "import analysis.query_costs"])
def test_analysis_and_figures_load_neither_the_emulator_nor_the_sql_engine(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert [m for m in loaded if m.split(".")[0] in ("emulator", "lark") or m.startswith("cosmoscore.sql")] == []


def test_the_emulator_runs_without_the_collectors() -> None:
    loaded = _loaded_after("import emulator.cli, emulator.server")
    assert [m for m in loaded if m.split(".")[0] in ("collectors", "ruscope")] == []
