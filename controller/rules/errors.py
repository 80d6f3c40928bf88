"""Errors raised by the rules core.

Every error is a ``RulesError`` and also a ``ValueError`` (bad input), so callers that only
know builtins can still catch them. Messages are one line, fit for an operator.
"""
from __future__ import annotations

from shoectl_config.errors import ConfigError


class RulesError(ValueError):
    """Base of every rules-core error."""


class CardError(RulesError):
    """A card string could not be parsed, or a card is not in the shoe's composition."""


class CompositionError(RulesError):
    """More copies of a card were removed than the shoe holds, or a bad deck count."""


class RoundStateError(RulesError):
    """The round engine was fed a card it cannot take (the round is complete) or asked for a
    result before the round is complete."""


class InsufficientCardsError(RulesError):
    """Too few cards to complete a round: the round is void (627a.13(e))."""


class SubmissionError(RulesError, ConfigError):
    """A Rules Submission file is invalid. The message names the file, the key and the reason
    (``source``, ``key``, ``reason``: see ``shoectl_config.errors.ConfigError``)."""


class WagerError(RulesError):
    """A wager is not valid for the game or the Rules Submission (unknown kind, bad amount)."""
