"""The ``shoectl`` command line. Each sub-command lives in its own ``cmd_*.py`` module."""
