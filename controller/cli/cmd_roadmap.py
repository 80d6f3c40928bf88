"""``shoectl roadmap PATH [--shoe ID] [--format text|svg|png] [--json] [-o FILE]``: the baccarat
roadmaps (bead plate, big road, big eye boy, small road, cockroach pig) of one shoe of the journal
at PATH (default: the latest shoe with a normal round), from its normal rounds (docs/roadmaps.md).

Output goes to standard output, or to FILE with ``-o``: text (default), SVG, PNG (needs Pillow;
refused on a terminal without ``-o``), or with ``--json`` the stable JSON
``{"bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"}`` on one line.
An unknown shoe (the journal's shoe ids are named), a journal without shoes, PNG without Pillow,
or a FILE whose name says another format than the one written (``output_format``): UsageError
(exit 2); a missing or unusable journal: JournalError, an OSError (exit 2); a
journal that does not verify: exit 1, unless ``--no-verify`` (``controller.cli.journal_input``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from controller.cli.common import terminal_columns, write_output
from controller.cli.journal_input import (
    EXIT_DOES_NOT_VERIFY,
    add_journal_input,
    read_checked,
    refuse_output_over_journal,
)
from controller.errors import UsageError, new_file_argument
from controller.journal.replay import entries_needed, replay
from controller.roadmaps import compute, render_png, render_svg, render_text, results_from_rounds
from shoectl_config.text import quoted


FORMATS = {"text": "text", "svg": "SVG", "png": "PNG"}  # --format's choices, and their names in words
FORMATS_BY_SUFFIX = {".txt": "text", ".svg": "svg", ".png": "png"}
# Images this command never writes: text, SVG or JSON under such a name would open as a broken image.
OTHER_IMAGES = {".gif": "GIF", ".jpg": "JPEG", ".jpeg": "JPEG", ".bmp": "BMP", ".tif": "TIFF", ".tiff": "TIFF",
                ".webp": "WebP", ".avif": "AVIF", ".heic": "HEIC", ".ico": "ICO", ".pdf": "PDF", ".eps": "EPS"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("roadmap", help="the baccarat roadmaps of one shoe of a journal (text, SVG, PNG, JSON)",
                       description="The bead plate, big road, big eye boy, small road and cockroach pig of one "
                                   "shoe, from its normal rounds (simulated and void rounds are not on the roads).")
    add_journal_input(p)
    p.add_argument("--shoe", metavar="ID", help="the shoe (default: the latest shoe that has a round on the roads)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--format", choices=list(FORMATS),
                     help="text grids (the default), an SVG document, or a PNG image (needs Pillow); without it, "
                          "-o FILE's .svg or .png says which")
    how.add_argument("--json", action="store_true", help="the roads as one JSON object (logical columns)")
    p.add_argument("-o", "--output", type=new_file_argument, metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(func=run)


def shoe_rounds(docs: list[dict[str, Any]], shoe: str | None) -> tuple[str, list[dict[str, Any]]]:
    """The id and the round documents (in journal order) of ``shoe`` among replayed documents; when
    ``shoe`` is None, of the latest shoe with a round on the roads (a normal round), else the
    latest shoe. UsageError if the journal has no shoe, or no shoe ``shoe`` (naming the ids it has)."""
    rounds: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        sid = d.get("shoe")
        if sid is not None:
            rounds.setdefault(sid, [])
            if d.get("type") == "round":
                rounds[sid].append(d)
    if not rounds:
        raise UsageError("no shoe in the journal")
    if shoe is None:
        with_rounds = [sid for sid, docs in rounds.items() if any(d.get("kind") == "normal" for d in docs)]
        shoe = (with_rounds or list(rounds))[-1]
    elif shoe not in rounds:
        raise UsageError(f"no shoe {quoted(shoe)} in the journal; its shoes: {_ids(list(rounds))}")
    return shoe, rounds[shoe]


def _ids(ids: list[str], most: int = 12) -> str:
    """The ids, or the first and last few of them and how many there are."""
    if len(ids) <= most:
        return ", ".join(ids)
    return f"{', '.join(ids[:3])}, ..., {', '.join(ids[-3:])} ({len(ids)} shoes)"


def output_format(chosen: str | None, output: str | None, *, as_json: bool = False) -> str | None:
    """The format to write: None with ``as_json`` (``--json``); else ``--format``, else the one
    ``-o FILE``'s suffix names, else text. UsageError when FILE's name says a format the output is
    not: another than ``--format``'s, or an image with ``--json`` or one this command never writes
    (an SVG document in ``x.png``, JSON in ``x.png`` or text grids in ``x.gif`` would open as a
    broken image)."""
    suffix = Path(output).suffix.lower() if output else ""
    named = FORMATS_BY_SUFFIX.get(suffix)
    said = FORMATS[named] if named else OTHER_IMAGES.get(suffix)
    if as_json:
        if said in (None, FORMATS["text"]):
            return None
        writes = "--json says JSON"
    elif chosen is None:
        if said is None or named is not None:
            return named or "text"
        writes = "a format roadmap does not write (text, SVG or PNG)"
    elif said in (None, FORMATS[chosen]):
        return chosen
    else:
        writes = f"--format says {FORMATS[chosen]}"
    raise UsageError(f"-o {output}: the file name says {said}, {writes}; give a name and a format that agree")


def run(args: argparse.Namespace) -> int:
    refuse_output_over_journal(args, args.output)
    args.format = output_format(args.format, args.output, as_json=args.json)
    # Every shoe's start, to choose the latest or to name them; the rounds of --shoe alone, if given.
    docs = read_checked(args, lambda entries: list(replay(entries)), keep=entries_needed(args.shoe))
    if docs is None:
        return EXIT_DOES_NOT_VERIFY
    sid, docs = shoe_rounds(docs, args.shoe)
    results = results_from_rounds(docs)
    maps = compute(results)
    if args.json:
        _emit(json.dumps(maps.to_json(), separators=(",", ":"), ensure_ascii=False) + "\n", args.output)
        return 0
    title = _title(sid, results, len(docs))
    if args.format == "png":
        data = render_png(maps, title=title)
        if args.output:
            write_output(data, args.output)
        elif sys.stdout.isatty():
            raise UsageError("refusing to write a PNG image to a terminal: use -o FILE")
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        return 0
    on_terminal = args.output is None and sys.stdout.isatty()  # blocks that fit it; a file's rows whole
    text = render_svg(maps, title=title) if args.format == "svg" else render_text(
        maps, title=title, width=terminal_columns() if on_terminal else None)
    _emit(text, args.output)
    return 0


def _title(sid: str, results: list[Any], n_rounds: int) -> str:
    counts = {k: sum(1 for r in results if r.outcome == k) for k in "BPT"}
    title = (f"shoe {sid}: {len(results)} rounds (banker {counts['B']}, player {counts['P']}, "
             f"tie {counts['T']})")
    off = n_rounds - len(results)
    return title + (f"; {off} simulated or void not on the roads" if off else "")


def _emit(text: str, output: str | None) -> None:
    if output:
        write_output(text, output)
    else:
        sys.stdout.write(text)
