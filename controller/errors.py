"""Errors shared by the controller's command-line layer."""
from __future__ import annotations


class UsageError(ValueError):
    """Bad command-line usage or input that the user can fix; reported as one line, exit 2."""
