"""docs/deployment.md, "Restoring a table from a copy", quotes the feed's refusal of a copy shorter
than the floor's record, for an operator to recognise it; the quote is what `shoectl feed` and
`shoectl run --feed` print (``FeedCursor.check_journal``). It quoted a line the program never
printed (a review of the mends)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.floor.cursor import CursorError, FeedCursor

DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"


def test_the_restoring_section_quotes_the_cursors_refusal_as_printed(tmp_path: Path) -> None:
    section = DOC.read_text(encoding="utf-8").split("### Restoring a table from a copy", 1)[1].split("\n### ", 1)[0]
    quoted = [q for q in re.findall(r"`([^`]*)`", " ".join(section.split())) if "ends at entry" in q]
    assert quoted, section
    cursor = FeedCursor(tmp_path / "j.db.feed-cursor", "T1", "2026-12-08T00:00:00Z", journal=tmp_path / "j.db")
    cursor.save(318, "ab" * 32)
    with pytest.raises(CursorError) as said:
        cursor.check_journal(150, lambda seq: None)
    printed = str(said.value)
    for quote in quoted:  # "N" and "M" stand for the numbers, "..." for the rest of the line
        pattern = re.escape(quote).replace("N", r"\d+").replace("M", r"\d+").replace(r"\.\.\.", ".*")
        assert re.search(pattern, printed), (quote, printed)
