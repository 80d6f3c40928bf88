"""``tools/leak_origins.py`` (``-p tools.leak_origins``) names the test and the line that made a
socket left open, though the collector frees it during a later test."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LEAKING = '''
import gc, socket

class Holder:
    pass

def test_makes_a_socket_and_leaves_it_in_a_cycle():
    holder = Holder()
    holder.sock = socket.socket()
    holder.me = holder

def test_runs_later():
    gc.collect()
'''


def test_a_socket_left_open_is_reported_with_the_test_and_stack_that_made_it(tmp_path: Path) -> None:
    (tmp_path / "test_leaking.py").write_text(LEAKING, encoding="utf-8")
    reports = tmp_path / "reports"
    env = {**os.environ, "LEAK_ORIGINS_DIR": str(reports), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tools.leak_origins", "-p", "no:cacheprovider",
                           "-W", "ignore::ResourceWarning", str(tmp_path / "test_leaking.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    text = "".join(p.read_text(encoding="utf-8") for p in reports.glob("*.txt"))
    assert text.count("=== left open: <socket.socket") == 1, text
    assert "freed during: test_leaking.py::test_runs_later" in text
    assert "made during: test_leaking.py::test_makes_a_socket_and_leaves_it_in_a_cycle" in text
    assert "holder.sock = socket.socket()" in text  # the line that made it, in the stack
