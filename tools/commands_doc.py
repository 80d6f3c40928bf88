"""Write the command reference into docs/control.md from the commands table.

Usage: ``python tools/commands_doc.py`` (rewrites the block between the markers, or inserts it
at the end of the "Who may do what" section the first time). The check is a test
(tests/control/test_edge.py).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.table.commands import REFERENCE_BEGIN, REFERENCE_END, markdown_reference  # noqa: E402

DOC = ROOT / "docs" / "control.md"


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    if REFERENCE_BEGIN in text and REFERENCE_END in text:
        head, rest = text.split(REFERENCE_BEGIN, 1)
        _, tail = rest.split(REFERENCE_END, 1)
        text = head + markdown_reference() + tail
    else:
        marker = "\n## `shoectl ctl`"
        text = text.replace(marker, "\n" + markdown_reference() + "\n" + marker, 1)
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
