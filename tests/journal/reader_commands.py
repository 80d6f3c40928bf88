"""The commands that read a journal (``READERS``): each reader's name and its ``shoectl``
arguments, before the journal's path."""
from __future__ import annotations

READERS = {
    "verify": ["journal", "verify"],
    "export": ["journal", "export"],
    "replay": ["journal", "replay"],
    "audit cards": ["audit", "cards"],
    "audit shuffle": ["audit", "shuffle"],
    "roadmap": ["roadmap"],
}
