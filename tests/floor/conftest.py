"""Fixtures of the floor's tests: a throwaway PostgreSQL cluster (tests/services/postgres.py)."""
from services.postgres import floor_db, postgres_cluster  # noqa: F401
