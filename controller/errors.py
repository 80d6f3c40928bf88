"""Errors shared by the controller's command-line layer, and ``path_argument``, the argparse type
of every argument that names a file or a folder."""
from __future__ import annotations

import argparse


class UsageError(ValueError):
    """Bad command-line usage or input that the user can fix; reported as one line, exit 2."""


def path_argument(text: str) -> str:
    """``text``, an argument naming a file or a folder (``type=path_argument``), unless it is
    empty: an unset variable in ``--hmac-key "$KEY"`` is refused (``argument --hmac-key: an empty
    file name``, exit 2), never taken for "not given" nor for the current folder."""
    if not text:
        raise argparse.ArgumentTypeError("an empty file name")
    return text
