"""Reading input files (shoectl_config.files, shoectl_config.documents): a regular file checked
before it is opened, a size cap, UTF-8, a byte-order mark, TOML errors on one line."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from shoectl_config import files as files_mod
from shoectl_config.documents import parse_toml, read_toml_file
from shoectl_config.errors import ConfigError
from shoectl_config.files import NotARegularFile, read_regular_file, require_regular_file


class Refused(ConfigError):
    """A loader's own error class, as each loader passes its own."""


def read(path: object, max_bytes: int = 1024) -> tuple[str, bytes, int]:
    return read_regular_file(path, max_bytes, Refused)  # type: ignore[arg-type]


def refusal(path: object, max_bytes: int = 1024) -> Refused:
    with pytest.raises(Refused) as info:
        read(path, max_bytes)
    err = info.value
    assert err.key == "" and "\n" not in str(err)
    return err


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_bytes(b"x = 1\n")
    shown, raw, mode = read(path)
    assert (shown, raw) == (str(path), b"x = 1\n") and mode & 0o777 == path.stat().st_mode & 0o777


@pytest.mark.timeout(20)
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO with nobody writing would block ``open`` forever (issue 9 item 11)."""
    fifo = tmp_path / "in.toml"
    os.mkfifo(fifo)
    done = threading.Event()
    result: list[BaseException] = []

    def attempt() -> None:
        try:
            read(fifo)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            result.append(exc)
        done.set()

    threading.Thread(target=attempt, daemon=True).start()
    assert done.wait(10), "reading a FIFO blocked"
    assert isinstance(result[0], Refused) and str(result[0]) == f"{fifo}: is a FIFO, not a regular file"
    with pytest.raises(NotARegularFile, match="is a FIFO, not a regular file"):
        require_regular_file(fifo)


@pytest.mark.parametrize("path, reason", [
    ("/dev/null", "is a character device, not a regular file"),
    (".", "is a directory, not a regular file"),
])
def test_other_kinds_of_file_are_refused(path: str, reason: str) -> None:
    assert refusal(path).reason == reason


def test_missing_oversized_and_odd_paths(tmp_path: Path) -> None:
    assert refusal(tmp_path / "nope.toml").reason == "file not found"
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 11)
    assert refusal(big, max_bytes=10).reason == "file is larger than 10 bytes"
    assert read(big, max_bytes=11)[1] == b"#" * 11
    assert refusal(42).reason == "not a file path" and refusal(42).source == "42"
    assert refusal("a\0b").reason.startswith("cannot read the file: ")
    assert refusal(str(big) + "/x").reason == "cannot read the file: Not a directory"
    weird = tmp_path / "a\nb.toml"
    assert refusal(weird).source == str(tmp_path / "a\\nb.toml")  # printable on one line


def test_a_failing_disk_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edges a test cannot reach for real (as root, or with a healthy disk): mocked."""
    path = tmp_path / "a.toml"
    path.write_bytes(b"")

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files_mod, "open", denied, raising=False)
    import pwd

    user = pwd.getpwuid(os.geteuid()).pw_name
    # whom the program runs as, and the change that gives it the file (an integrator review)
    assert refusal(path).reason == (f"cannot read the file: permission denied (this program runs as {user}: let it read "
                                    f"the file (its owner or group, e.g. chown {user} '{path}'))")
    monkeypatch.setattr(files_mod, "open", broken, raising=False)
    assert refusal(path).reason == "cannot read the file: Input/output error"


@pytest.mark.parametrize("raw, reason", [
    (b"a = 1\n\xff", "not UTF-8 text (bad byte at offset 6)"),
    (b"a = = 1\n", "TOML syntax error: Invalid value (at line 1, column 5)"),
    (b"a = 1\na = 2\n", "TOML syntax error"),
    (b"a = " + b"9" * 5000 + b"\n", "TOML value error"),
    (b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", "TOML syntax error"),
    (b"a = \"\x01\"\n", "TOML syntax error"),
])
def test_bad_documents_are_one_line(raw: bytes, reason: str) -> None:
    with pytest.raises(Refused) as info:
        parse_toml(raw, "doc.toml", Refused)
    assert info.value.source == "doc.toml" and reason in info.value.reason and "\n" not in str(info.value)


@pytest.mark.parametrize("key", [".".join(["a"] * 15_000), ".".join(['"q"'] * 15_000), "x = { " + ".".join(["k"] * 15_000),
                                 "# ''' in a comment hides nothing\n" + ".".join(["a"] * 15_000)])
def test_a_dotted_key_of_thousands_of_parts_is_refused_before_it_is_parsed(key: str) -> None:
    """A configuration review: tomllib takes time and memory in the square of a dotted key's
    length (a 30 KB profile took 1.3 GB; an operators file swapped in under a running table had it
    killed by the kernel). A key of more than ``MAX_KEY_PARTS`` parts is refused, with its line, at
    once; a document of short keys and dotted strings and numbers reads as ever."""
    import resource

    from shoectl_config.documents import MAX_KEY_PARTS

    raw = f"[device]\nvendor = 'v'\n{key} = 1\n".encode()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(Refused) as info:
        parse_toml(raw, "doc.toml", Refused)
    assert info.value.reason == (f"a dotted key of more than {MAX_KEY_PARTS} parts (at line {3 + key.count(chr(10))}): "
                                 "not a configuration of shoectl")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB: parsed, it took gigabytes
    sixty_four = ".".join(["a"] * MAX_KEY_PARTS)
    text = (f's = "{"." * 300}"\nf = [{", ".join(["1.5"] * 300)}]\nt = """\n{"." * 300}\n"""\n{sixty_four} = 1\n'
            f"# notes {'.' * 300}\nu = 'it # is {'.' * 100}'  # a row of dots in a comment, a string's # (a review)\n"
            f'e = """an escaped \\""" and {"." * 100}"""\n')
    assert parse_toml(text.encode(), "doc.toml", Refused)["f"] == [1.5] * 300


def test_a_byte_order_mark_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf[s]\r\nk = 'v'\r\n")
    shown, data, _ = read_toml_file(path, 1024, Refused)
    assert shown == str(path) and data == {"s": {"k": "v"}}


@pytest.mark.parametrize("raw, reason", [
    (b"[operators.a]\nrole = 'dealer'\n[operators.a]\n", "Cannot declare operators.a twice (at line 3, column 13)"),
    (b"[a]\n[a]\n", "Cannot declare a twice (at line 2, column 3)"),
    (b"a = {b = 1}\na.c = 2\n", "Cannot mutate immutable namespace a (at line 2, column 8)"),
])
def test_a_key_in_a_syntax_error_is_written_as_in_toml(raw: bytes, reason: str) -> None:
    """A review found "TOML syntax error: Cannot declare ('operators', 'a') twice": tomllib names
    a key as a Python tuple. It is said as the file writes it."""
    with pytest.raises(Refused) as info:
        parse_toml(raw, "doc.toml", Refused)
    assert info.value.reason == f"TOML syntax error: {reason}"
