"""The floor: a table's journal published to an MQTT broker (feed) and collected into PostgreSQL
(collector, central store). docs/floor.md."""
