"""A private Redis for the tests that need one (tools/redisserver.py: the real redis-server,
installed from Debian's packages when missing). Import the fixture into a test module."""

import pytest

from tools.redisserver import RedisServer


@pytest.fixture(scope="module")
def redis_server():
    with RedisServer() as server:
        yield server
