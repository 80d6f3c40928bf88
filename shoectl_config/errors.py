"""The error every configuration loader raises: one line naming the file, the key and the reason."""
from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A configuration or input file is invalid or cannot be read.

    The message is ``SOURCE: KEY: REASON`` (``SOURCE: REASON`` when no key applies), on one line;
    the parts are also attributes. Each loader raises its own subclass (``ProfileError``,
    ``SubmissionError``, ``OperatorsError``), so callers catch what they know."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")
