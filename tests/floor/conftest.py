"""Fixtures of the floor's tests: a throwaway PostgreSQL cluster (tests/services/postgres.py), a
real Mosquitto broker under the documented ACL (tests/services/mosquitto.py) and one with a TLS
listener (tests/floor/brokers.py), the collector processes a test starts (tests/floor/
collector_processes.py) and the feed's journals (tests/floor/feeds.py)."""
from floor.brokers import tls_broker  # noqa: F401 - a fixture
from floor.collector_processes import collectors  # noqa: F401 - a fixture
from floor.feeds import five_entry_journal, table_journal, table_journal_copy  # noqa: F401 - fixtures
from floor.journals import store  # noqa: F401 - a fixture
from services.mosquitto import mosquitto  # noqa: F401
from services.postgres import floor_db, postgres_cluster  # noqa: F401
