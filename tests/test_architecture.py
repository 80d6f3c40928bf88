"""Layering rules from DESIGN.md, checked on the source (imports are read with ast, not run)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "controller" / "rules"

# The rules core is pure: no device bridge, no state-machine library, no serial/usb, no I/O modules.
FORBIDDEN_IN_RULES = {
    "firmware_bridge", "transitions", "serial", "usb", "socket", "sqlite3", "subprocess", "threading",
    "asyncio", "structlog", "logging", "controller.table", "controller.journal", "controller.cli",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(RULES.glob("*.py")), ids=lambda p: p.name)
def test_rules_core_imports_nothing_impure(path: Path) -> None:
    bad = {n for n in _imports(path) for f in FORBIDDEN_IN_RULES if n == f or n.startswith(f + ".")}
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_rules_core_does_no_file_io() -> None:
    """Only the Rules Submission loader reads files (it is the rules core's configuration input)."""
    for path in RULES.glob("*.py"):
        if path.name == "submission.py":
            continue
        text = path.read_text(encoding="utf-8")
        for call in ("open(", ".read_text(", ".write_text(", "print("):
            assert call not in text, f"{path.name} calls {call}"


def test_firmware_bridge_does_not_import_the_controller() -> None:
    for path in (ROOT / "firmware_bridge").rglob("*.py"):
        bad = {n for n in _imports(path) if n == "controller" or n.startswith("controller.")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_the_shared_configuration_package_imports_neither_side() -> None:
    """shoectl_config sits below both firmware_bridge and the controller (both import it), so it
    imports neither of them."""
    paths = sorted((ROOT / "shoectl_config").rglob("*.py"))
    assert paths
    for path in paths:
        bad = {n for n in _imports(path) for side in ("controller", "firmware_bridge")
               if n == side or n.startswith(side + ".")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
