"""The broker fixture beyond tests/services/mosquitto.py's ``mosquitto``: ``tls_broker``, a real
Mosquitto with a TLS listener (``mqtts://``) and a throwaway CA. Exposed through tests/floor/
conftest.py and tests/scoreboard/conftest.py."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.mosquitto import Mosquitto, running


@pytest.fixture
def tls_broker() -> Iterator[Mosquitto]:
    with running(tls=True) as broker:
        yield broker
