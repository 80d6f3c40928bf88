"""Reading the project's configuration and input files, shared by both sides of the house.

Why a top-level package: ``firmware_bridge`` must never import ``controller``, and
``controller.rules`` must import nothing from ``firmware_bridge`` (nor from other controller
packages), yet the device profiles, the Rules Submission and the operators file are read and
checked the same way. The one place both may import is a package below both: this one. It
imports nothing from ``controller`` or ``firmware_bridge`` (tests/test_architecture.py checks it).

- ``files``: an input must be a regular file before it is opened (a FIFO never blocks), read up
  to a size cap (``read_regular_file``, ``require_regular_file``);
- ``documents``: UTF-8 and TOML with one-line errors (``parse_toml``, ``read_toml_file``);
- ``numbers``: bounded decimals (``bounded_decimal``): length, range and decimal places checked
  before any arithmetic;
- ``parser``: ``DocumentParser``, the base of every loader's validation pass (``fail``,
  ``section``, ``integer``, ``choice``, ``decimal``, ...);
- ``errors``: ``ConfigError(source, key, reason)``, the base of every loader's error;
- ``text``: values made printable for messages (``safe``, ``show``, ``typename``, ``key_part``);
- ``toml_text``: TOML text a person can copy into a file (``toml_document``, ``toml_value``).

Importing the package has no side effects.
"""
