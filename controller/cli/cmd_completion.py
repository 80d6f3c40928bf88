"""``shoectl completion bash|zsh``: the shell's completion script for shoectl, generated from the
argument parser by shtab, so it always knows every command, option and choice of this version.

shtab writes a static script: a TAB costs the shell nothing, where argcomplete would start
Python and import shoectl on every TAB. Installing the script: ``docs/deployment.md``
(bash: ``shoectl completion bash > ~/.local/share/bash-completion/completions/shoectl``; zsh:
``shoectl completion zsh > ~/.zfunc/_shoectl`` with ``~/.zfunc`` in ``fpath``).
"""
from __future__ import annotations

import argparse
import sys

SHELLS = ("bash", "zsh")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("completion", help="print the shell completion script (bash or zsh)")
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(completion_script(args.shell))
    return 0


def completion_script(shell: str) -> str:
    """The completion script of ``shell`` for the whole ``shoectl`` parser."""
    import shtab

    from controller.cli.main import build_parser  # the parser this command is part of

    script = shtab.complete(build_parser(), shell=shell)
    return script if script.endswith("\n") else script + "\n"
