"""Fixtures of the floor's tests: a throwaway PostgreSQL cluster (tests/services/postgres.py) and a
real Mosquitto broker under the documented ACL (tests/services/mosquitto.py)."""
from services.mosquitto import mosquitto  # noqa: F401
from services.postgres import floor_db, postgres_cluster  # noqa: F401
