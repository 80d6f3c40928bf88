"""Reading the project's configuration and input files, shared by both sides of the house.

The lowest layer: it imports nothing from ``controller`` or ``firmware_bridge``, and both may
import it (the rules core included: it is pure parsing, no device or table I/O).
"""
