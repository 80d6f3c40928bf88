"""A terminal screen as a PNG: the text and colours of ``tmux capture-pane -p -e`` (or any ANSI
text) drawn cell by cell in a monospaced font, for the screenshots in docs/img/.

Usage: ``python tools/terminal_png.py CAPTURE.ansi OUT.png --size 100x30``, or ``--run`` to run a
command in a new tmux window of that size and capture it once it has ended (or after ``--wait``
seconds)::

    python tools/terminal_png.py --run ".venv/bin/shoectl run --shoes 1 --speed max --seed 4 \\
        --journal /tmp/shot/j.db" docs/img/live-display.png --size 100x30

Needs Pillow and pyte (the ``test`` extra) and, with ``--run``, tmux. The text is parsed by pyte
(a VT100 emulator), so the picture is the screen a person saw, not the raw byte stream.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyte
from PIL import Image, ImageDraw, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONTS = {False: FONT_DIR / "DejaVuSansMono.ttf", True: FONT_DIR / "DejaVuSansMono-Bold.ttf"}
BACKGROUND, FOREGROUND = "#1e1e1e", "#d4d4d4"
# The 16 ANSI colours (a dark theme, as a terminal would show them) by pyte's names.
NAMED = {"black": "#000000", "red": "#cd3131", "green": "#0dbc79", "brown": "#e5e510", "blue": "#2472c8",
         "magenta": "#bc3fbc", "cyan": "#11a8cd", "white": "#e5e5e5", "brightblack": "#666666",
         "brightred": "#f14c4c", "brightgreen": "#23d18b", "brightbrown": "#f5f543", "brightblue": "#3b8eea",
         "brightmagenta": "#d670d6", "brightcyan": "#29b8db", "brightwhite": "#ffffff"}


def colour(name: str, default: str) -> str:
    if name == "default":
        return default
    if name in NAMED:
        return NAMED[name]
    return f"#{name}" if len(name) == 6 else default  # pyte gives 256-colour and true colour as hex


def screen_of(ansi: str, columns: int, lines: int) -> pyte.Screen:
    screen = pyte.Screen(columns, lines)
    stream = pyte.Stream(screen)
    lines = ansi.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the capture's last newline: on the last row it would scroll the screen
    stream.feed("\r\n".join(lines))
    return screen


def draw(screen: pyte.Screen, size: int = 16) -> Image.Image:
    fonts = {bold: ImageFont.truetype(str(path), size) for bold, path in FONTS.items()}
    left, top, right, bottom = fonts[False].getbbox("M")
    cell_w, cell_h = round(fonts[False].getlength("M")), round(size * 1.3)
    pad = 12
    image = Image.new("RGB", (screen.columns * cell_w + 2 * pad, screen.lines * cell_h + 2 * pad), BACKGROUND)
    pen = ImageDraw.Draw(image)
    for y in range(screen.lines):
        row = screen.buffer[y]
        for x in range(screen.columns):
            ch = row[x]
            fg, bg = colour(ch.fg, FOREGROUND), colour(ch.bg, BACKGROUND)
            if ch.reverse:
                fg, bg = bg, fg
            x0, y0 = pad + x * cell_w, pad + y * cell_h
            if bg != BACKGROUND:
                pen.rectangle([x0, y0, x0 + cell_w - 1, y0 + cell_h - 1], fill=bg)
            if ch.data.strip():
                pen.text((x0, y0 + (cell_h - size) // 2), ch.data, font=fonts[bool(ch.bold)], fill=fg)
    return image


def capture(command: str, columns: int, lines: int, wait: float) -> str:
    """Run ``command`` in a detached tmux session of that size; the screen (with colours) once
    it has ended or after ``wait`` seconds."""
    name = f"shot-{uuid.uuid4().hex[:8]}"
    done = f"{name}-done"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", str(columns), "-y", str(lines),
                    f"{command}; tmux wait-for -S {done}; sleep 600"], check=True)
    try:
        waiter = subprocess.Popen(["tmux", "wait-for", done])
        try:
            waiter.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            waiter.kill()
        time.sleep(0.3)
        return subprocess.run(["tmux", "capture-pane", "-t", name, "-p", "-e"], check=True,
                              capture_output=True, text=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="a file of ANSI text, or with --run a shell command")
    p.add_argument("output", help="the PNG to write")
    p.add_argument("--run", action="store_true", help="run SOURCE in tmux and capture its screen")
    p.add_argument("--size", default="100x30", help="COLUMNSxLINES (default 100x30)")
    p.add_argument("--wait", type=float, default=120, help="with --run: capture after this many seconds at most")
    args = p.parse_args(argv)
    columns, lines = (int(n) for n in args.size.split("x"))
    ansi = capture(args.source, columns, lines, args.wait) if args.run else Path(args.source).read_text()
    draw(screen_of(ansi, columns, lines)).save(args.output)
    print(f"{args.output}: {columns}x{lines} from {shlex.quote(args.source)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
