"""What one of shoectl's optional extras brings, said as the command that installs it.

An extra (``fast``, ``floor``, ``plot``, ``png``, ``scoreboard``: ``pyproject.toml``) is a name for
some packages of the public index; shoectl itself is on no index, so ``pip install
'shoectl[fast]'`` finds nothing there (and would install whatever took the name: a packaging
review). ``install_hint("fast")`` is ``pip install 'numpy<3,>=1.26'``: the extra's packages as the
installed package's metadata lists them (one source: ``pyproject.toml``), or, where that metadata
is not there (the sources run without installing), the extra's name.
"""
from __future__ import annotations

import shlex


def install_hint(extra: str) -> str:
    """The command that installs ``extra``'s packages into this Python, with the extra named."""
    import importlib.metadata  # only when a command needs the hint: about 10 ms to import

    try:
        requirements = importlib.metadata.requires("shoectl") or []
    except importlib.metadata.PackageNotFoundError:
        requirements = []
    marker = f'extra == "{extra}"'
    packages = [r.split(";", 1)[0].strip() for r in requirements if marker in r.replace("'", '"')]
    if not packages:
        return f"install shoectl's {extra} extra"
    return f"pip install {' '.join(shlex.quote(p) for p in packages)} (shoectl's {extra} extra)"
