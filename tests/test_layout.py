"""The package layout's rules, read from the import statements of every module
(those inside functions too): each package imports only the packages below it
(``docs/architecture.md``), and no module reaches itself through its imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# what each package may import besides itself; the base modules (engine.errors,
# engine._jit) may be imported by all and import nothing of the engine
ALLOWED = {
    "engine.rules": set(),
    "engine.movegen": {"engine.rules"},
    "engine.notation": {"engine.rules", "engine.movegen"},
    "engine.eval": {"engine.rules", "engine.movegen"},
    "engine.cube": {"engine.rules", "engine.movegen"},
    "engine.search": {"engine.rules", "engine.movegen", "engine.notation", "engine.eval",
                      "engine.cube"},
    "engine.play": {"engine.rules", "engine.movegen", "engine.notation", "engine.eval",
                    "engine.search", "engine.cube"},
    "engine.cluster": {"engine.rules", "engine.movegen", "engine.eval", "engine.search",
                       "engine.cube"},
    "engine.cli": {"engine.rules", "engine.movegen", "engine.notation", "engine.eval",
                   "engine.search", "engine.cube", "engine.play", "engine.cluster"},
    "engine.web": {"engine.rules", "engine.movegen", "engine.notation", "engine.eval",
                   "engine.search", "engine.cube", "engine.play", "engine.cli"},
    "training": {"engine.rules", "engine.movegen", "engine.eval", "engine.search",
                 "engine.play", "engine.cli", "engine.cluster", "engine"},
}
BASE = {"engine.errors", "engine._jit"}
# the top-level public API and the thin ``python -m engine.<name>`` entry modules
ENTRIES = {"engine": {"engine.rules", "engine.movegen"},
           "engine.analyse": {"engine.cli"}, "engine.protocol": {"engine.cli"},
           "engine.cube_cli": {"engine.cli"}, "engine.play.__main__": {"engine.cli"},
           "engine.ubgi": {"engine.cli"}, "engine.external": {"engine.cli"},
           "engine.review": {"engine.cli"}}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    files = [*sorted((ROOT / "engine").rglob("*.py")), *sorted((ROOT / "training").rglob("*.py"))]
    return {_module_name(p): p for p in files if "__pycache__" not in p.parts}


def _imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, absolute, with ``from X import y`` read as
    ``X.y`` when that is a module (else ``X``)."""
    known = _modules()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m.split(".")[0] in ("engine", "training")}


def _package(module: str) -> str:
    if module in BASE or module in ENTRIES:
        return module
    parts = module.split(".")
    return parts[0] if parts[0] == "training" else ".".join(parts[:2])


def test_every_engine_module_is_in_a_known_package():
    for name in _modules():
        assert _package(name) in ALLOWED or name in BASE or name in ENTRIES, name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_imports_go_down_the_layers(name):
    path = _modules()[name]
    mine = _package(name)
    for target in sorted(_imports(name, path)):
        theirs = _package(target)
        if theirs == mine or theirs in BASE:
            continue
        if mine in BASE:
            pytest.fail(f"{name} is a base module and imports {target}")
        allowed = ENTRIES.get(mine, ALLOWED.get(mine, set()))
        assert theirs in allowed, (f"{name} ({mine}) imports {target} ({theirs}); "
                                   f"{mine} may import {sorted(allowed)}")


def test_no_module_reaches_itself():
    """No circle of imports, lazy imports inside functions included (a lazy import
    would only hide one)."""
    mods = _modules()
    graph = {n: {t for t in _imports(n, p) if t in mods and t != n} for n, p in mods.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for t in sorted(graph[n]):
            # a package's __init__ is imported by its own modules' import; only
            # edges to other modules count
            if state.get(t) == 1:
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
