"""docs/floor.md, Reading: a feed run under an account of its own, in the journal's group (folder
2770, the table under umask 007), makes and takes the cursor's .lock and the journal's .feed.lock
in turn with the table's own feed. When the table's files became 0640 the locks did too, and a
lock one account made could not be opened for writing by the other (a review of that change)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from controller.floor.cursor import CursorError, FeedCursor, default_cursor_path
from tests.unprivileged import as_ids, said_as

GROUP, TABLE, FEED = 40000, 40001, 40002  # numeric ids: no account is made


def _claimed_as(uid: int, journal: Path) -> str:
    """What claiming the journal's feed cursor says as ``uid`` of ``GROUP`` (umask 007), in a
    forked child: "" when it was claimed and released."""
    def claim() -> str:
        cursor = FeedCursor(default_cursor_path(journal), "T1", "2026-12-07T00:00:00.000000Z", journal=journal)
        try:
            cursor.claim()
            cursor.release()
        except CursorError as exc:
            return str(exc)
        return ""
    return said_as(claim, as_ids(uid, GROUP, 0o007))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as two accounts of one group")
def test_a_feed_under_another_account_of_the_group_takes_the_locks_the_table_s_feed_made() -> None:
    folder = Path(tempfile.mkdtemp(prefix="shoectl-feed-locks-"))
    try:
        os.chown(folder, 0, GROUP)
        os.chmod(folder, 0o2770)
        journal = folder / "j.db"
        assert _claimed_as(TABLE, journal) == ""  # the table's own feed (run --feed) makes both locks
        assert _claimed_as(FEED, journal) == ""   # then shoectl feed, under the feed's account
    finally:
        shutil.rmtree(folder)
