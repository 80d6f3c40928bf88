"""The table core's one exception."""
from __future__ import annotations


class Refused(ValueError):
    """An input the table does not accept now; the message is the reason, in the operator's
    words. Raised before anything changes: a refused input changes nothing."""
