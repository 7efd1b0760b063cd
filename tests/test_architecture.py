"""The module map holds: dependencies point one way, and the generically named
packages are imported from this repository, not from some other distribution."""
import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = {"controller", "getpage", "textfilter", "urlfilter", "urllist", "demosite"}
ALLOWED = {
    "controller": {"getpage", "textfilter", "urlfilter", "urllist", "demosite"},
    "getpage": set(), "textfilter": set(), "urlfilter": set(), "urllist": set(),
    "demosite": set(),
}


def imported_packages(package: str) -> set[str]:
    found = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found & PROJECT - {package}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_dependencies_point_one_way(package):
    assert imported_packages(package) <= ALLOWED[package]


@pytest.mark.parametrize("package", sorted(PROJECT))
def test_packages_are_imported_from_this_repository(package):
    module = importlib.import_module(package)
    assert Path(module.__file__).resolve().parent == ROOT / package


DOORS = {"cli.py", "api.py", "__init__.py"}   # where the engine and the readers meet


def test_engine_does_not_import_the_readers():
    engine = [path for path in (ROOT / "controller").glob("*.py")
              if path.name not in DOORS]
    for path in engine:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {node.module for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and node.module}
        modules |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names}
        assert not {m for m in modules if m.startswith("controller.readers")}, path.name
