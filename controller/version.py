"""The installed shoectl's version, for ``shoectl --version`` and the journal's
``controller_started`` record: read from the package metadata once per process, only when asked
for (reading it costs about 40 ms)."""
from __future__ import annotations

import functools

__all__ = ["shoectl_version"]


@functools.cache
def shoectl_version() -> str:
    """The version of the installed package, or a phrase that says it is not installed."""
    import importlib.metadata

    try:
        return importlib.metadata.version("shoectl")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(version unknown: not installed)"
