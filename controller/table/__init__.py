"""The table: the regulated life of a shoe as a ``transitions`` state machine (sans-I/O core) and
the runner that feeds it from the device links and the operators, one thread owning it."""
