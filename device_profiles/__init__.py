"""The built-in device profiles: one ``NAME.toml`` per device model (``docs/device-profiles.md``).

A data package and nothing else: it holds no code, so that the profiles ship inside the wheel and
are found with ``importlib.resources.files("device_profiles")`` from a checkout and from an
installed copy alike (``firmware_bridge.profiles.builtin_profile_dir``).
"""
