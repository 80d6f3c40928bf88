"""The scoreboard: a read-only live web page of a table's roads, last round and state, and a floor
page of every table. docs/scoreboard.md."""
