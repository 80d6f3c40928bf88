"""Device profiles: garbage (random documents, one bad value in a good one, random bytes and
edited shipped files) never raises anything but ProfileError, always one line."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.profiles import Profile, ProfileError, load_profile, parse_profile

from .profile_documents import SERIAL_BASE, SHIPPED, USB_BASE, with_change, write

toml_scalars = st.one_of(
    st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(max_size=20), st.sampled_from(["serial", "usb", "shoe", "batch", "N", "bulk", "E"]),
    st.integers(min_value=0, max_value=0x1FF), st.just(1.5), st.dates(),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
KEYS = sorted({k for base in (SERIAL_BASE, USB_BASE) for s in base.values() for k in s}
              | {"stopbits", "bytesize", "serial_number", "configuration", "interface", "transfer", "max_packet",
                 "automatic_reshuffle", "deck_capacity", "shuffle_ms", "usb_serial", "manufacturer"})


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(st.one_of(st.text(max_size=12), st.sampled_from(["device", "transport", "capabilities", "timing"])),
                            toml_values, max_size=5))
def test_garbage_documents_raise_only_profile_error(data: dict) -> None:
    try:
        parse_profile(data, "garbage.toml", "garbage")
    except ProfileError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from([SERIAL_BASE, USB_BASE]),
       section=st.sampled_from(["device", "transport", "capabilities", "timing"]),
       key=st.sampled_from(KEYS), value=toml_values)
def test_one_bad_value_raises_only_profile_error(base: dict, section: str, key: str, value: Any) -> None:
    data = with_change(base, f"{section}.{key}", value)
    try:
        p = parse_profile(data, "x.toml", "x")
    except ProfileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("x.toml")
    else:
        assert isinstance(p, Profile) and parse_profile(p.to_dict(), "x.toml", "x") == p


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(st.binary(max_size=400),
                     st.builds(lambda t, i, s: t[:i] + s + t[i + len(s):],
                               st.just(Path(SHIPPED[0]).read_text(encoding="utf-8")),
                               st.integers(min_value=0, max_value=1200), st.text(max_size=6))))
def test_garbage_files_raise_only_profile_error(tmp_path: Path, raw: bytes | str) -> None:
    path = write(tmp_path, raw, "garbage.toml")
    try:
        load_profile(path)
    except ProfileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
