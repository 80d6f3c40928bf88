"""Layering rules of docs/architecture.md, checked on the source (imports are read with ast, not run)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "controller" / "rules"

# The rules core is pure: no device bridge, no state-machine library, no serial/usb, no I/O modules.
FORBIDDEN_IN_RULES = {
    "firmware_bridge", "transitions", "serial", "usb", "socket", "sqlite3", "subprocess", "threading",
    "asyncio", "structlog", "logging", "controller.table", "controller.journal", "controller.cli",
}


_PROJECT_MODULE = re.compile(r"(?:controller|firmware_bridge|shoectl_config)(?:\.\w+)*")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` may import: ``import X``; ``from X import a`` as ``X`` and ``X.a`` (``a``
    may be a module: ``from controller import table``); relative imports resolved from the file's
    package; and, in a file that calls ``importlib.import_module``, every string literal that names
    a project module. A name built at run time (``controller.cli.main``'s ``COMMAND_MODULES``, the
    journal package's lazy names: each of its own package) is not seen."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:  # relative: resolved from the file's package
                package = path.relative_to(ROOT).parent.parts
                base = ".".join([*package[:len(package) - (node.level - 1)], *([node.module] if node.module else [])])
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names if a.name != "*")
        elif isinstance(node, ast.Attribute) and node.attr == "import_module" or \
                isinstance(node, ast.Name) and node.id == "import_module":
            dynamic = True
    if dynamic:
        names.update(node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                     and isinstance(node.value, str) and _PROJECT_MODULE.fullmatch(node.value))
    return names


@pytest.mark.parametrize("path", sorted(RULES.glob("*.py")), ids=lambda p: p.name)
def test_rules_core_imports_nothing_impure(path: Path) -> None:
    bad = {n for n in _imports(path) for f in FORBIDDEN_IN_RULES if n == f or n.startswith(f + ".")}
    assert not bad, f"{path.name} imports {sorted(bad)}"


# The rules core's only readers of files, and why each may.
RULES_READERS = {
    "submission.py": "the Rules Submission loader: the rules core's configuration input",
    "odds_tables.py": "tables shipped inside the package, read only: a cache of what the builders derive "
                      "(a missing or damaged file is derived again)",
}


def test_rules_core_does_no_file_io() -> None:
    """Only ``RULES_READERS`` read files; nothing in the rules core writes one or prints."""
    for path in RULES.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for call in ("open(", ".read_text(", ".read_bytes(", ".write_text(", ".write_bytes(", "print(",
                     "os.read(", "os.write("):
            if path.name in RULES_READERS and call in ("open(", ".read_text(", ".read_bytes("):
                continue
            assert call not in text, f"{path.name} calls {call}"


# The allowed edges between the project's packages: each package may import only those listed
# (and itself). docs/architecture.md draws the same table. ``controller`` and ``firmware_bridge``
# stand for their top-level modules (the modules directly in the package: roles, table_ids, errors,
# fsutil, descriptors, logconfig, queued_output, money, version, sdnotify, simulation*; profiles, profile_parser, profile_data, udev, errors).
ALLOWED: dict[str, set[str]] = {
    "shoectl_config": set(),
    "firmware_bridge.protocol": set(),
    "firmware_bridge": {"firmware_bridge.protocol", "shoectl_config"},  # a profile's protocol version
    "firmware_bridge.transport": {"firmware_bridge"},
    "firmware_bridge.link": {"firmware_bridge", "firmware_bridge.protocol", "firmware_bridge.transport"},
    "firmware_bridge.emulator": {"firmware_bridge", "firmware_bridge.protocol", "firmware_bridge.transport"},
    "controller.rules": {"shoectl_config"},
    "controller": {"controller.rules", "shoectl_config"},
    "controller.journal": {"controller", "shoectl_config"},
    "controller.roadmaps": {"controller", "controller.rules", "shoectl_config"},
    "controller.audit": {"controller", "controller.journal", "controller.rules", "firmware_bridge.protocol",
                         "shoectl_config"},
    "controller.operators": {"controller", "shoectl_config"},
    "controller.table": {"controller", "controller.rules", "controller.journal", "controller.audit",
                         "controller.roadmaps", "firmware_bridge", "firmware_bridge.protocol", "shoectl_config"},
    "controller.floor": {"controller", "controller.journal", "controller.roadmaps", "controller.rules",
                         "shoectl_config"},
    "controller.scoreboard": {"controller", "controller.journal", "controller.roadmaps", "controller.rules",
                              "controller.floor", "shoectl_config"},
    "controller.control": {"controller", "controller.rules", "controller.journal", "controller.operators",
                           "controller.table", "shoectl_config"},
    "controller.cli": {"controller", "controller.rules", "controller.journal", "controller.audit",
                       "controller.roadmaps", "controller.operators", "controller.table", "controller.control",
                       "controller.floor", "controller.scoreboard",
                       "firmware_bridge", "firmware_bridge.emulator", "firmware_bridge.link",
                       "firmware_bridge.protocol", "firmware_bridge.transport", "shoectl_config"},
}
PACKAGES = sorted(ALLOWED, key=len, reverse=True)  # the most specific first


def _package_of(module: str) -> str | None:
    return next((p for p in PACKAGES if module == p or module.startswith(p + ".")), None)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _edges() -> dict[tuple[str, str], str]:
    """(from package, to package) -> one file that makes that edge (lazy imports included)."""
    edges: dict[tuple[str, str], str] = {}
    for top in ("shoectl_config", "firmware_bridge", "controller"):
        for path in sorted((ROOT / top).rglob("*.py")):
            source = _package_of(_module_name(path))
            for name in _imports(path):
                target = _package_of(name)
                if target is not None and target != source:
                    edges.setdefault((source, target), str(path.relative_to(ROOT)))
    return edges


def test_every_import_between_packages_is_an_allowed_edge() -> None:
    bad = [f"{src} -> {dst} ({where})" for (src, dst), where in sorted(_edges().items()) if dst not in ALLOWED[src]]
    assert not bad, "imports outside the allowed package edges:\n" + "\n".join(bad)


def test_the_edges_table_names_only_real_packages() -> None:
    for package in ALLOWED:
        assert (ROOT / package.replace(".", "/")).is_dir(), package
    assert all(dst in ALLOWED for deps in ALLOWED.values() for dst in deps)


def test_no_docstring_holds_a_lone_surrogate() -> None:
    """Python 3.13 refuses to compile a docstring holding a lone surrogate (``"\\udcff"`` written
    with one backslash; CPython issue 142411): every command of an installed package failed there
    with a traceback (a packaging review), while 3.11 took it. The package says it runs on 3.11 and
    later: a docstring writes such a character escaped (``\\\\udcff``)."""
    found = []
    for top in ("controller", "firmware_bridge", "shoectl_config"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node, clean=False) or ""
                    if any("\ud800" <= c <= "\udfff" for c in doc):
                        found.append(f"{path.relative_to(ROOT)}: {getattr(node, 'name', 'module')}")
    assert found == []


def _documented_edges() -> dict[str, set[str]]:
    """docs/architecture.md's table of packages: package -> the packages it may import (``.x``
    names a package of the row's own top level; "everything above": every package listed before)."""
    documented: dict[str, set[str]] = {}
    for line in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        package = re.match(r"`([\w.]+)`", cells[0]).group(1)  # type: ignore[union-attr]
        top = package.split(".")[0]
        if cells[2] == "everything above":
            documented[package] = set(documented)
            continue
        names = re.findall(r"`([\w.]+)`", cells[2])
        documented[package] = {top + name if name.startswith(".") else name for name in names}
    return documented


def test_the_documented_package_edges_are_the_allowed_ones() -> None:
    """docs/architecture.md says "a test holds the package edges to it": this one (an architecture
    review found the table above a hand-kept copy of the doc's, equal that day, free to drift)."""
    assert _documented_edges() == ALLOWED
