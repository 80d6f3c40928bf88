"""The installed shoectl's version, for ``shoectl --version`` and the journal's
``controller_started`` record: read from the package metadata once per process, only when asked
for (reading it costs about 40 ms)."""
from __future__ import annotations

import functools

__all__ = ["shoectl_version"]


_UNREADABLE = "(version unknown: its metadata cannot be read)"


@functools.cache
def shoectl_version() -> str:
    """The version of the installed package, or a phrase that says why it is unknown. Never
    raises: the version is a label, and a table must not stop for want of it."""
    try:
        import importlib.metadata as metadata
    except (ImportError, OSError):  # OSError: its source unreadable (e.g. out of file descriptors)
        return _UNREADABLE
    try:
        return metadata.version("shoectl")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(version unknown: not installed)"
    except (ImportError, OSError, ValueError):  # a module it needs, or the metadata, unreadable
        return _UNREADABLE
