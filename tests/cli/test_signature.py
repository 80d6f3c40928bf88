"""`shoectl signature`: one SHA-256 over every file of the installed program, which each table
journals when it starts, so that a journal says which exact code dealt it (a packaging review:
every build of a release says 0.1.0)."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from cli_run import dealt_journal, run
from controller.journal import JournalReader, kinds
from controller.signature import PACKAGES
from required import require_command

ROOT = Path(__file__).resolve().parents[2]


def test_the_signature_is_the_sha256_of_a_listing_sha256sum_checks(capsys, tmp_path: Path) -> None:
    code, listing, err = run(capsys, "signature", "--list")
    assert code == 0 and err == ""
    code, out, _ = run(capsys, "signature", "--json")
    said = json.loads(out)
    assert said["signature"] == "sha256:" + hashlib.sha256(listing.encode()).hexdigest()
    assert said["files"] == len(listing.splitlines()) > 250
    paths = [line.split("  ", 1)[1] for line in listing.splitlines()]
    assert paths == sorted(paths) and {p.split("/")[0] for p in paths} == set(PACKAGES)
    assert "controller/rules/presets/minibaccarat.toml" in paths and "device_profiles/emulated-shoe.toml" in paths
    assert not any("__pycache__" in p or p.endswith(".pyc") for p in paths)
    (tmp_path / "listing").write_text(listing, encoding="utf-8")
    checked = subprocess.run([require_command("sha256sum", "coreutils"), "-c", "--quiet", str(tmp_path / "listing")],
                             cwd=said["root"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    code, out, _ = run(capsys, "signature")
    assert out == f"shoectl {said['version']}: {said['signature']} ({said['files']} files under {said['root']})\n"


def _signature_of(tree: Path) -> dict:
    """The signature of the program copied to ``tree`` (``-S`` and ``tree`` as the working folder:
    neither site's editable finder nor the checkout finds the checkout's own first)."""
    done = subprocess.run([sys.executable, "-S", "-c", "import json; from controller.signature import program_signature as p; "
                           "s = p(); print(json.dumps({'digest': s.digest, 'listing': s.listing}))"],
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, cwd=tree, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_one_byte_changed_in_any_file_of_the_program_changes_its_signature(tmp_path: Path) -> None:
    tree = tmp_path / "program"
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    before = _signature_of(tree)
    preset = tree / "controller" / "rules" / "presets" / "minibaccarat.toml"
    preset.write_bytes(preset.read_bytes().replace(b"decks = 8", b"decks = 6"))
    after = _signature_of(tree)
    assert after["digest"] != before["digest"]
    changed = {p for (d, p), (d0, p0) in zip(after["listing"], before["listing"]) if d != d0}
    assert changed == {"controller/rules/presets/minibaccarat.toml"}  # the listing says which file


def test_a_table_journals_the_signature_of_the_program_that_deals(capsys, tmp_path: Path) -> None:
    journal = dealt_journal(tmp_path / "t.db", "--rounds", "1", "--no-edge-monitor")
    with JournalReader.open(journal) as r:
        [started] = [e.payload for e in r.entries(kinds=(kinds.CONTROLLER_STARTED,))]
    code, out, _ = run(capsys, "signature", "--json")
    assert started["signature"] == json.loads(out)["signature"]
