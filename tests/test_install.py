"""A normal install works (the README's step 1, ``pip install .``): the wheel built from this tree,
installed with its dependencies into a fresh virtual environment outside the checkout, runs the
table, lists the profiles and presets, and never reads the checkout.

This is the only test of the wheel's contents: every other test runs the editable install, which
finds data files in the checkout whether or not they are packaged. pip uses its own configuration
(index, cache, find-links) to resolve the dependencies, as a user's install would.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # about half a minute: a wheel build and an install with dependencies

INSTALL_TIMEOUT = 600  # seconds; a cold pip cache downloads the build backend and dependencies


def _clean_env() -> dict[str, str]:
    """The environment without anything that points into the checkout or this test's venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith("SHOECTL_")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _source_copy(dest: Path) -> Path:
    """The files a commit of this tree would hold (tracked, and new files git does not ignore),
    copied outside the checkout, so the build writes nothing into it."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the working tree is not copied
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _run(argv: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def install(tmp_path_factory) -> dict:
    """Build the wheel, install it into a new venv; the venv's bin directory, the build log and
    an empty working directory, all outside the checkout."""
    work = tmp_path_factory.mktemp("install")
    assert ROOT not in work.resolve().parents
    src = _source_copy(work / "src")
    build = _run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(work / "dist"), str(src)],
                 cwd=work, timeout=INSTALL_TIMEOUT)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = (work / "dist").glob("shoectl-*.whl")
    venv.create(work / "venv", with_pip=False)  # this pip installs into it (--python): ensurepip costs 4-5 s
    bin_dir = work / "venv" / "bin"
    installed = _run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--quiet", str(wheel)],
                     cwd=work, timeout=INSTALL_TIMEOUT)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    cwd = work / "table"
    cwd.mkdir()
    return {"bin": bin_dir, "build_log": build.stdout + build.stderr, "cwd": cwd}


def _shoectl(install: dict, *args: str) -> subprocess.CompletedProcess[str]:
    done = _run([str(install["bin"] / "shoectl"), *args], cwd=install["cwd"])
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_the_code_and_data_come_from_the_venv_not_the_checkout(install) -> None:
    probe = _run([str(install["bin"] / "python"), "-c",
                  "import controller, device_profiles, firmware_bridge, shoectl_config; "
                  "print('\\n'.join(m.__file__ for m in (controller, device_profiles, firmware_bridge, shoectl_config)))"],
                 cwd=install["cwd"])
    assert probe.returncode == 0, probe.stderr
    venv_dir = install["bin"].parent.resolve()
    for path in probe.stdout.split():
        assert venv_dir in Path(path).resolve().parents, path


def test_the_build_prints_no_deprecation_warning(install) -> None:
    """The license table once gave four setuptools deprecation warnings on every install."""
    assert "deprecat" not in install["build_log"].lower()


def test_version(install) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    done = _shoectl(install, "--version")
    assert done.returncode == 0
    assert done.stdout == f"shoectl {version}\n"


def test_the_installed_program_signs_the_files_it_was_installed_with(install) -> None:
    """`shoectl signature` of an installed wheel: its files in site-packages, the same set of
    paths as the checkout's packages (the wheel ships every file the program is made of)."""
    done = _shoectl(install, "signature", "--json")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["signature"].startswith("sha256:") and "site-packages" in said["root"]
    listing = _shoectl(install, "signature", "--list").stdout.splitlines()
    installed = {line.split("  ", 1)[1] for line in listing}
    shipped = {str(p.relative_to(ROOT)) for name in ("controller", "device_profiles", "firmware_bridge", "shoectl_config")
               for p in (ROOT / name).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert installed == shipped


def test_profiles_list_shows_every_shipped_profile(install) -> None:
    done = _shoectl(install, "profiles", "list")
    assert done.returncode == 0, done.stderr
    for path in (ROOT / "device_profiles").glob("*.toml"):
        assert path.stem in done.stdout


def test_udev_rules_are_generated_from_the_shipped_profiles(install) -> None:
    done = _shoectl(install, "udev", "generate")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (ROOT / "udev" / "99-shoectl.rules").read_text(encoding="utf-8")


def test_udev_check_reads_the_installed_rules_outside_a_checkout(install) -> None:
    """An installed copy has no udev/ folder of its own: check looks where the rules are installed."""
    done = _shoectl(install, "udev", "check")
    assert "/etc/udev/rules.d/99-shoectl.rules" in done.stdout and "site-packages" not in done.stdout


def test_rules_presets_are_shipped(install) -> None:
    done = _shoectl(install, "rules", "presets")
    assert done.returncode == 0, done.stderr
    for path in (ROOT / "controller" / "rules" / "presets").glob("*.toml"):
        assert path.stem in done.stdout


def test_the_odds_tables_are_shipped_and_found(install) -> None:
    """The presets' value-class tables are package data (docs/odds.md, "Shipped tables"): the
    installed copy finds every one of them, so no process derives them again."""
    shipped = sorted(p.name for p in (ROOT / "controller" / "rules" / "tables").glob("*.json.gz"))
    assert shipped
    probe = _run([str(install["bin"] / "python"), "-c",
                  "from controller.rules import odds_tables as t; import sys; "
                  "print(t.TABLES); print(all(t.load(n.removesuffix(t.SUFFIX)) for n in sys.argv[1:]))", *shipped],
                 cwd=install["cwd"])
    assert probe.returncode == 0, probe.stderr
    folder, found = probe.stdout.split()
    assert install["bin"].parent.resolve() in Path(folder).resolve().parents
    assert found == "True"


def test_without_the_fast_extra_the_odds_are_pure_python_and_numpy_is_asked_for_in_words(install) -> None:
    """A plain install has no numpy (it is the ``fast`` extra): ``shoectl odds`` evaluates in pure
    Python by default, and gives the same figures as this checkout (numpy, when it has it);
    ``--engine numpy`` is refused in one line that says what to install."""
    plain = _shoectl(install, "odds", "--game", "ez-baccarat", "--json")
    assert plain.returncode == 0, plain.stderr
    here = subprocess.run([sys.executable, "-m", "controller.cli.main", "odds", "--game", "ez-baccarat", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert here.returncode == 0, here.stderr
    assert json.loads(plain.stdout)["exact"] == json.loads(here.stdout)["exact"]
    asked = _shoectl(install, "odds", "--engine", "numpy")
    assert asked.returncode == 2 and asked.stdout == ""
    assert asked.stderr.strip() == "shoectl odds: error: the numpy odds engine needs numpy: pip install 'numpy<3,>=1.26' (shoectl's fast extra)"


def test_run_deals_a_shoe_into_a_journal_that_verifies(install) -> None:
    done = _shoectl(install, "run", "--shoes", "1", "--speed", "max")
    assert done.returncode == 0, done.stderr
    journal = install["cwd"] / "var" / "journal.db"
    assert journal.is_file()
    assert _shoectl(install, "journal", "verify", str(journal)).returncode == 0
    replay = _shoectl(install, "journal", "replay", str(journal), "--json")
    assert replay.returncode == 0, replay.stderr
    rounds = [r for r in map(json.loads, replay.stdout.splitlines()) if r.get("type") == "round"]
    assert len(rounds) > 10
