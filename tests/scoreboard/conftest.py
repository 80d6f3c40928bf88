"""Fixtures of the scoreboard's tests: a real Mosquitto broker under the documented ACL
(tests/services/mosquitto.py) and one with a TLS listener (tests/floor/brokers.py, shared with the
floor's tests)."""
from floor.brokers import tls_broker  # noqa: F401 - a fixture
from services.mosquitto import mosquitto  # noqa: F401 - a fixture
