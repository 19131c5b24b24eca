"""Import rules of a Python package (the torch worker, python/rlvr_worker): no import circle among
its modules and no private name (`_x`, dunders excepted) taken from another of its modules.

Usage: python worker_imports.py PACKAGE_DIR [ORDER]. ORDER (optional) is a comma-separated list of
module names, lowest first: a listed module may import only modules listed before it (modules not
listed are unconstrained). Every import counts, the ones inside functions too
(a lazy import still ties two modules together). Standard library only (ast). Prints one line per
finding and exits 1, or prints "ok: N modules" and exits 0.
"""

from __future__ import annotations

import ast
import os
import sys
from typing import Dict, List, Optional, Set


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _target(mod: str, level: int, module: Optional[str], pkg: str) -> Optional[str]:
    """The package module an import names (None when it is outside the package)."""
    if level == 0:
        if module is None or not (module == pkg or module.startswith(pkg + ".")):
            return None
        rest = module[len(pkg) + 1 :]
    else:
        rest = module or ""
    return (rest.split(".")[0] if rest else "__init__") or "__init__"


def scan(pkg_dir: str, order: Optional[List[str]] = None) -> List[str]:
    pkg = os.path.basename(os.path.normpath(pkg_dir))
    modules = sorted(f[:-3] for f in os.listdir(pkg_dir) if f.endswith(".py"))
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    findings: List[str] = []
    for mod in modules:
        path = os.path.join(pkg_dir, mod + ".py")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        siblings: Set[str] = set()  # local names bound to a module of the package
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _target(mod, node.level, node.module, pkg)
                if target is None:
                    continue
                for alias in node.names:
                    # `from . import x` names module x when the package has one.
                    t = alias.name if target == "__init__" and alias.name in graph else target
                    if t != mod:
                        graph[mod].add(t)
                    if t == alias.name:
                        siblings.add(alias.asname or alias.name)
                    elif _private(alias.name):
                        findings.append(f"{pkg}/{mod}.py:{node.lineno}: imports private name {alias.name} from {t}.py")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    target = _target(mod, 0, alias.name, pkg)
                    if target is not None and target != mod:
                        graph[mod].add(target)
                        if alias.asname:
                            siblings.add(alias.asname)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in siblings and _private(node.attr):
                findings.append(f"{pkg}/{mod}.py:{node.lineno}: uses private name {node.value.id}.{node.attr}")
    rank = {m: i for i, m in enumerate(order or [])}
    for mod in modules:
        for t in sorted(graph[mod]):
            if mod in rank and t in rank and rank[t] > rank[mod]:
                findings.append(f"{pkg}/{mod}.py imports {t}.py, which comes after it in the layer order")
    findings += _circles(graph, pkg)
    if not findings:
        print(f"ok: {len(modules)} modules")
    return findings


def _circles(graph: Dict[str, Set[str]], pkg: str) -> List[str]:
    """One line per import circle found by a depth-first walk (each reported once)."""
    out: List[str] = []
    seen: Set[str] = set()
    stack: List[str] = []
    reported: Set[frozenset] = set()

    def walk(m: str) -> None:
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if n in stack:
                cyc = stack[stack.index(n) :] + [n]
                key = frozenset(cyc)
                if key not in reported:
                    reported.add(key)
                    out.append(f"{pkg}: import circle " + " -> ".join(f"{c}.py" for c in cyc))
            elif n not in seen:
                walk(n)
        stack.pop()
        seen.add(m)

    for m in sorted(graph):
        if m not in seen:
            walk(m)
    return out


if __name__ == "__main__":
    problems = scan(sys.argv[1], sys.argv[2].split(",") if len(sys.argv) > 2 else None)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)
