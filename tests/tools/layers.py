"""The import graph between the layers, read from the source (``python -m tests.tools.layers``).

Layers, bottom to top: ``editor`` (the Qt-free core) and ``widgets`` (the Qt window and
the program ``onnx-studio`` itself: :mod:`widgets.cli` composes the core's subcommands with
the window and ``render``). A module may import its own layer and the one below it, never
one above. Imports are read statically with :mod:`ast`, so an
import inside a function counts as much as one at the top (a runtime import walk would not
see it until the function runs), and so does ``importlib.import_module("literal")``.

Prints the edges between editor's packages and the upper layers (with how many imports
each), the import cycles among editor's packages (strongly connected components, via
networkx), and every upward import; exits 1 when there is one.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("editor", "widgets")


@dataclass
class ImportGraph:
    #: (from unit, to unit) -> number of import statements
    edges: Counter = field(default_factory=Counter)
    #: (module file, imported module) of each import that points up
    upward: list[tuple[str, str]] = field(default_factory=list)
    #: module -> module imports inside editor (for module-level cycles)
    modules: nx.DiGraph = field(default_factory=nx.DiGraph)


def unit(module: str) -> str | None:
    """The node a module belongs to: ``editor.<package>`` for the core, else its layer."""
    parts = module.split(".")
    if parts[0] not in LAYERS:
        return None
    if parts[0] == "editor" and len(parts) > 1:
        return f"editor.{parts[1]}"
    return parts[0]


def module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, module: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append(name)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append(node.args[0].value)  # importlib.import_module("widgets.window.app") reaches up too
    return out


def build(root: Path = ROOT) -> ImportGraph:
    graph = ImportGraph()
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            module = module_of(path)
            src = unit(module)
            for name in imports_of(path, module):
                dst = unit(name)
                if dst is None or src is None:
                    continue
                if LAYERS.index(dst.split(".")[0]) > LAYERS.index(src.split(".")[0]):
                    graph.upward.append((str(path.relative_to(root)), name))
                if dst != src:
                    graph.edges[(src, dst)] += 1
                if src.startswith("editor.") and dst.startswith("editor."):
                    graph.modules.add_edge(module, _known(root, name))
    return graph


def _known(root: Path, name: str) -> str:
    """``editor.commands.nodes.AddNode`` style names back to the module that defines them."""
    parts = name.split(".")
    while parts:
        base = root.joinpath(*parts)
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return name


def module_cycles(graph: ImportGraph) -> list[list[str]]:
    """Groups of editor modules that import each other, biggest first."""
    comps = (sorted(c) for c in nx.strongly_connected_components(graph.modules) if len(c) > 1)
    return sorted(comps, key=len, reverse=True)


def cycles(graph: ImportGraph) -> list[list[str]]:
    """Groups of editor packages that import each other (directly or round a loop)."""
    g = nx.DiGraph()
    g.add_edges_from(e for e in graph.edges if e[0].startswith("editor.") and e[1].startswith("editor."))
    return sorted((sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1), key=len, reverse=True)


def report(graph: ImportGraph) -> str:
    lines = ["import graph (from -> to: imports)"]
    for (src, dst), n in sorted(graph.edges.items()):
        lines.append(f"  {src:24} -> {dst:24} {n}")
    loops = cycles(graph)
    lines.append(f"cycles among editor packages: {len(loops)}")
    lines += [f"  {' <-> '.join(c)}" for c in loops]
    mods = module_cycles(graph)
    lines.append(f"module cycles in editor: {len(mods)} (sizes {[len(c) for c in mods]})")
    lines += [f"  {', '.join(c)}" for c in mods]
    lines.append(f"upward imports: {len(graph.upward)}")
    lines += [f"  {path}: imports {name}" for path, name in graph.upward]
    return "\n".join(lines)


def main() -> int:
    graph = build()
    print(report(graph))
    return 1 if graph.upward else 0


if __name__ == "__main__":
    sys.exit(main())
