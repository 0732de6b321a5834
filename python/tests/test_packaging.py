"""pyproject.toml declares what the package imports: every third-party module the
modules import is a dependency or an extra, every one declared is imported, and one
imported only inside ``try: ... except ImportError`` is an extra, not required."""

from __future__ import annotations

import ast
import re
import sys
from typing import Dict, List, Set

import pytest

from conftest import ROOT

tomllib = pytest.importorskip("tomllib")

PACKAGE = ROOT / "python" / "gentle"


def _imports() -> Dict[str, bool]:
    """Third-party modules imported by the package: name -> whether some import of
    it is unconditional (not inside a try that catches ImportError)."""
    found: Dict[str, bool] = {}

    def visit(node: ast.AST, optional: bool) -> None:
        if isinstance(node, ast.Try):
            catches = any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                for h in node.handlers
            )
            for child in node.body:
                visit(child, optional or catches)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, optional)
            return
        names: List[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for n in names:
            top = n.split(".")[0]
            if top in sys.stdlib_module_names or top in ("gentle", "__future__"):
                continue
            found[top] = found.get(top, False) or not optional
        for child in ast.iter_child_nodes(node):
            visit(child, optional)

    for path in sorted(PACKAGE.glob("*.py")):
        visit(ast.parse(path.read_text(), str(path)), False)
    return found


def _names(requirements: List[str]) -> Set[str]:
    return {re.split(r"[<>=!~ \[;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_declared_dependencies_are_what_the_package_imports():
    project = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]
    required = _names(project["dependencies"])
    extras = {k: _names(v) for k, v in project["optional-dependencies"].items() if k != "test"}
    optional = set().union(*extras.values())
    imports = _imports()
    assert set(imports) == required | optional, (imports, required, optional)
    for name, unconditional in imports.items():
        if not unconditional:
            assert name not in required, f"{name} is imported only when installed: an extra"
    # The test extra brings everything the tests and the optional features need.
    test = _names(project["optional-dependencies"]["test"])
    assert optional - {"ray", "tqdm"} <= test, optional - test
