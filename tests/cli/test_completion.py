"""``shoectl completion bash|zsh``: scripts generated from the parser, so they name every command
of this version; the bash script, sourced into a real bash, completes commands, subcommands and
an option's choices."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from required import require_command

from cli_run import run
from controller.cli.main import _command_groups, build_parser


def _every_command_name() -> set[str]:
    names: set[str] = set()
    for _, action in _command_groups(build_parser()):
        names.update(action.choices)
    return names


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_script_names_every_command_and_subcommand(capsys, shell: str) -> None:
    code, out, err = run(capsys, "completion", shell)
    assert (code, err) == (0, "")
    names = _every_command_name()
    assert {"run", "journal", "verify", "udev", "systemd-unit", "completion"} <= names
    missing = sorted(n for n in names if n not in out)
    assert missing == [], missing


def test_an_unknown_shell_is_refused(capsys) -> None:
    code, out, err = run(capsys, "completion", "fish")
    assert code == 2 and out == "" and err.count("\n") == 1 and "invalid choice" in err


def _complete_in_bash(script: Path, *words: str) -> list[str]:
    bash = require_command("bash")
    array = " ".join(f"'{w}'" for w in ("shoectl", *words))
    probe = (f"source '{script}'; COMP_WORDS=({array}); COMP_CWORD={len(words)}; "
             'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; _shtab_shoectl; printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run([bash, "--norc", "--noprofile", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.split()


def test_bash_completes_commands_subcommands_and_choices(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "completion", "bash")
    script = tmp_path / "shoectl.bash"
    script.write_text(out, encoding="utf-8")
    assert _complete_in_bash(script, "jou") == ["journal"]
    assert set(_complete_in_bash(script, "journal", "")) == {"verify", "export", "migrate", "backup", "replay"}
    assert _complete_in_bash(script, "run", "--disp") == ["--display"]
    assert set(_complete_in_bash(script, "run", "--display", "")) == {"live", "lines"}
    assert set(_complete_in_bash(script, "udev", "generate", "--incl")) == {"--include-test-profiles"}


def test_zsh_script_parses(capsys, tmp_path: Path) -> None:
    zsh = require_command("zsh", "Debian's zsh package")
    code, out, _ = run(capsys, "completion", "zsh")
    script = tmp_path / "_shoectl"
    script.write_text(out, encoding="utf-8")
    done = subprocess.run([zsh, "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
