"""shoectl controller: the rules core, the table state machine, the journal and the CLI."""
