"""The embedded rules core: pure functions and immutable data, no I/O.

It imports nothing from firmware_bridge, transitions, serial or usb (a test checks). Public names
are re-exported from the submodules; import them from there in new code.
"""
