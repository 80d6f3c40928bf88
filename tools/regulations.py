"""Parse the regulation texts in docs/regulations/ into their clause ids.

``clauses(section_text, section) -> list[Clause]`` walks the lines that begin with a clause marker
(``(a)``, ``(1)``, ``(i)``, ``(A)``) and builds ids such as ``681a.7(i)(3)(ii)``. The marker
``(i)`` is ambiguous (the letter after ``h`` or the roman numeral one); it is roman when it opens a
level below a numbered clause, otherwise a letter. Markers inside running text (cross references
such as "§ 627a.10(c)") are ignored because they do not begin a line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REG_DIR = Path(__file__).resolve().parent.parent / "docs" / "regulations"
_MARK = re.compile(r"^\s*((?:\([A-Za-z0-9]{1,5}\))+)(?=\s|$)\s*(.*)$")
_ROMAN = ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"]
_SECTION_RE = re.compile(r"(\d{3}a\.\d+)")


@dataclass(frozen=True)
class Clause:
    id: str
    text: str  # the first words of the clause, for the table
    body: str = ""  # the clause's own words in full (its sub-clauses not included)


def _successor(token: str, current: str | None) -> bool:
    """Is ``token`` the next marker after ``current`` at the same level (or the first one)?"""
    if token.isdigit():
        return int(token) == (int(current) + 1 if current else 1)
    if token in _ROMAN and (current in _ROMAN or current is None) and not token.isupper():
        want = _ROMAN[_ROMAN.index(current) + 1] if current else "i"
        if token == want:
            return True
    if len(token) == 1 and token.isalpha():
        base = "A" if token.isupper() else "a"
        return token == (chr(ord(current) + 1) if current and len(current) == 1 else base)
    return False


def _level(token: str, path: list[str]) -> int | None:
    """The depth (1 letter, 2 number, 3 roman, 4 capital) this marker opens, or None when it
    cannot continue the outline (a cross reference at the start of a wrapped line)."""
    def current(depth: int) -> str | None:
        return path[depth - 1] if len(path) >= depth else None

    if token.isdigit():
        return 2 if len(path) >= 1 and _successor(token, current(2)) else None
    if token.isupper():
        return 4 if len(path) >= 3 and _successor(token, current(4)) else None
    if token in _ROMAN and len(path) >= 2 and _successor(token, current(3)):
        return 3
    return 1 if _successor(token, current(1)) else None


def clauses(text: str, section: str) -> list[Clause]:
    found: list[tuple[str, list[str]]] = []
    path: list[str] = []
    for line in text.splitlines():
        m = _MARK.match(line)
        if m:
            for token in re.findall(r"\(([A-Za-z0-9]{1,5})\)", m.group(1)):
                level = _level(token, path)
                if level is None or level > len(path) + 1:
                    break
                path = path[: level - 1] + [token]
                found.append((section + "".join(f"({p})" for p in path), []))
            else:
                found[-1][1].extend(m.group(2).split())
                continue
        if found:
            found[-1][1].extend(line.split())
    seen: set[str] = set()
    out = []
    for cid, words in found:
        if cid not in seen:
            seen.add(cid)
            out.append(Clause(cid, " ".join(words[:12]), " ".join(_before_notes(words))))
    return out


def _before_notes(words: list[str]) -> list[str]:
    """A section's last clause without the page's notes that follow it ("Cross References ...",
    the publisher's notice)."""
    text = " ".join(words)
    for note in (" Cross References ", " Notes 58 Pa. Code ", " No part of the information on this site ",
                 " The provisions of this § ", " This section cited in "):
        if note in f" {text} ":
            text = f" {text} ".split(note)[0].strip()
    return text.split()


def clause_texts(reg_dir: Path = REG_DIR) -> dict[str, str]:
    """Clause id -> its words and those of every clause below it, in the order of the text: what a
    test of that clause may quote."""
    out: dict[str, str] = {}
    for cs in all_clauses(reg_dir).values():
        for c in cs:
            out[c.id] = c.body
            parent = c.id[: c.id.rindex("(")]
            while "(" in parent:  # every clause above this one, up to the subsection
                out[parent] = f"{out[parent]} {c.body}"
                parent = parent[: parent.rindex("(")]
    return out


def section_of(path: Path) -> str:
    m = _SECTION_RE.search(path.name)
    if not m:
        raise ValueError(f"{path.name}: no section number in the file name")
    return m.group(1)


def all_clauses(reg_dir: Path = REG_DIR) -> dict[str, list[Clause]]:
    """Section -> its clauses, for every ``*.txt`` in ``reg_dir`` (README excluded)."""
    out = {}
    for f in sorted(reg_dir.glob("*.txt")):
        sec = section_of(f)
        out[sec] = clauses(f.read_text(encoding="utf-8"), sec)
    return out


_QUOTED = re.compile(r'"([^"]+)"')
_ELISION = re.compile(r"\.\.\.|\u2026|\[[^\]]*\]")
QUOTE_MIN_WORDS = 4


def _plain(text: str) -> str:
    """Text compared as words: curly quotes and apostrophes straight, whitespace single, lower case."""
    for curly, straight in (("\u2018\u2018", '"'), ("\u2019\u2019", '"'), ("\u201c", '"'), ("\u201d", '"'),
                            ("\u2019", "'"), ("\u2018", "'")):
        text = text.replace(curly, straight)
    return " ".join(text.split()).lower()


def quoted_passages(doc: str) -> list[str]:
    """The passages of ``doc`` between double quotes, each cut at an elision ("...", "[...]") into
    pieces of at least ``QUOTE_MIN_WORDS`` words: what a test's docstring quotes."""
    out = []
    for passage in _QUOTED.findall(_plain(doc)):
        for piece in _ELISION.split(passage):
            piece = piece.strip(" ,;:.()")
            if len(piece.split()) >= QUOTE_MIN_WORDS:
                out.append(piece)
    return out


def unquoted(clause_ids_named: list[str], doc: str, texts: dict[str, str]) -> list[str]:
    """The clauses among ``clause_ids_named`` that ``doc`` quotes no passage of (``texts`` from
    ``clause_texts``): a test of a clause states what the text requires in its words."""
    pieces = quoted_passages(doc)
    return [cid for cid in clause_ids_named if not any(p in _plain(texts[cid]) for p in pieces)]


def clause_ids(reg_dir: Path = REG_DIR) -> set[str]:
    return {c.id for cs in all_clauses(reg_dir).values() for c in cs}


if __name__ == "__main__":
    for sec, cs in all_clauses().items():
        for c in cs:
            print(c.id, "|", c.text)
