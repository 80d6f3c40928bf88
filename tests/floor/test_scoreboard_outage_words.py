"""docs/floor.md, The feed, Outages: "The collector's and the scoreboard's outage lines carry the
same words" (what a probe of the broker's port found). A floor scoreboard that loses a running
broker says only reason='Unspecified error'; the collector beside it says
"(nothing listens on port P of H)"."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from floor.helpers import SHOECTL, wait_until
from services.mosquitto import DISPLAY, Mosquitto


def test_a_floor_scoreboard_says_what_the_probe_found_when_the_broker_goes(mosquitto: Mosquitto,
                                                                          tmp_path: Path) -> None:
    err = tmp_path / "board.err"
    with err.open("wb") as f:
        board = subprocess.Popen([*SHOECTL, "scoreboard", "--broker", mosquitto.url, *mosquitto.login(DISPLAY),
                                  "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=f,
                                 stdin=subprocess.DEVNULL)
    try:
        assert board.stdout is not None and "scoreboard of the floor" in board.stdout.readline().decode()
        time.sleep(2)  # connected
        mosquitto.down()
        wait_until(lambda: "lost the connection" in err.read_text(), "the scoreboard saw the loss",
                   process=board, output=lambda: err.read_text())
        time.sleep(1)
        said = err.read_text()
        assert f"nothing listens on port {mosquitto.port}" in said and "Unspecified error" not in said, said
    finally:
        board.send_signal(signal.SIGTERM)
        board.wait(timeout=60)
        if board.stdout:
            board.stdout.close()
        mosquitto.up()
