"""Real journals for the floor's tests: ``run_table`` deals a few rounds with ``shoectl run`` on the
built-in emulator (``--speed max``) and returns the journal and its ``shoectl journal export``
lines; ``forge_next`` makes a well-formed entry that claims the next seq of a chain; ``items``
reads export lines as the collector does; the ``store`` fixture (exposed through
tests/floor/conftest.py) is a ``FloorStore`` on the test's database."""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from controller.floor.message import FloorEntry, parse_entry
from controller.floor.store import FloorStore
from controller.journal.chain import Hasher, entry_body, encode_payload
from cli_run import dealt_journal, run_captured


@dataclass(frozen=True)
class TableJournal:
    path: Path
    lines: list[str]  # the export, one entry per line, with its newline
    key_file: Path | None = None

    @property
    def export_file(self) -> Path:
        out = self.path.with_suffix(".jsonl")
        if not out.exists():
            out.write_text("".join(self.lines), encoding="utf-8")
        return out


def run_table(directory: Path, *, table_id: str = "T1", rounds: int = 12, seed: int = 5,
              hmac: bool = False) -> TableJournal:
    directory.mkdir(parents=True, exist_ok=True)
    journal = directory / f"{table_id}.db"
    extra: list[str] = []
    key_file = None
    if hmac:
        key_file = directory / f"{table_id}.key"
        key_file.write_bytes(b"k" * 16 + table_id.encode())
        key_file.chmod(0o600)
        extra = ["--hmac-key", str(key_file)]
    dealt_journal(journal, "--table-id", table_id, "--rounds", str(rounds), "--seed", str(seed), *extra)
    code, exported, err = run_captured("journal", "export", str(journal), *extra)
    assert code == 0, err
    return TableJournal(journal, exported.splitlines(keepends=True), key_file)


def forge_next(line: str, *, hasher: Hasher | None = None, seq_delta: int = 0, **changes: object) -> str:
    """The entry of ``line`` with ``changes`` to its columns and payload keys (``payload_*``), its
    hash recomputed with ``hasher`` (SHA-256 by default: what anyone can compute without the key)
    over its own ``prev_hash``, written as a journal writes it: a well-formed entry a forger could
    publish."""
    obj = json.loads(line)
    obj["seq"] += seq_delta
    for name, value in changes.items():
        if name.startswith("payload_"):
            obj["payload"][name[len("payload_"):]] = value
        else:
            obj[name] = value
    payload_text = encode_payload(obj["payload"])
    obj["payload"] = json.loads(payload_text)  # in the journal's key order: the line a table would write
    body = entry_body(obj["seq"], obj["ts"], obj["kind"], obj["table_id"], obj["shoe_id"], obj["round_no"],
                      obj["device_serial"], obj["device_epoch"], obj["device_counter"], obj["operator"],
                      payload_text)
    obj["hash"] = (hasher or Hasher()).digest(obj["prev_hash"], body)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def items(lines: list[str]) -> list[FloorEntry]:
    """Export lines as the collector reads them."""
    return [parse_entry(line) for line in lines]


@pytest.fixture
def store(floor_db: str) -> Iterator[FloorStore]:
    s = FloorStore.open(floor_db)
    yield s
    s.close()
