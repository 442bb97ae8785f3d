"""Who may import whom, read from the source: features see the host, never the composition root (not even for
the type checker); the kernel imports nothing else of the app at run time (imports for the type checker only
do not count there: the host names the types it hands out)."""

from __future__ import annotations

import ast
from pathlib import Path

from desktop.core import FEATURES

DESKTOP = Path(__file__).resolve().parents[1] / "desktop"


def imports(path: Path, *, type_checking: bool = False) -> set[str]:
    """The `desktop` modules `path` imports when it runs, and with `type_checking` those it imports for the
    type checker too (inside `if TYPE_CHECKING:` blocks)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checking = set() if type_checking else {
        id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for child in node.body for n in ast.walk(child)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in checking:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "desktop":
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "desktop")
    return found


def test_no_feature_imports_the_composition_root() -> None:
    """Every feature in FEATURES, whichever they are: a new one is checked without being named here."""
    packages = {feature.attach.__module__.split(".")[1] for feature in FEATURES}
    folders = {package: DESKTOP / package for package in packages}
    assert folders and all(folder.is_dir() for folder in folders.values()), f"features are packages: {folders}"
    offenders = [str(path.relative_to(DESKTOP.parent)) for package in sorted(packages)
                 for path in sorted(folders[package].rglob("*.py")) if "desktop.core" in imports(path, type_checking=True)]
    assert not offenders, f"feature modules that import desktop.core (take a Host instead): {offenders}"


def test_the_kernel_imports_only_the_kernel() -> None:
    offenders = {str(path.relative_to(DESKTOP.parent)): sorted(
        name for name in imports(path) if not name.startswith("desktop.kernel"))
        for path in sorted((DESKTOP / "kernel").glob("*.py"))}
    assert not {path: names for path, names in offenders.items() if names}
