"""tools/redisserver.py: a private Redis on loopback, stopped on exit (the real redis-server)."""

import subprocess
import sys

import redis

from tools.redisserver import REPO_ROOT, RedisServer, _ping


def test_a_private_redis_answers_and_stops():
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        client.set("k", "v")
        assert client.get("k") == b"v"
        port = server.port
    assert not _ping(port)


def test_the_command_runs_with_redis_url_and_redis_stops_after(tmp_path):
    probe = (
        "import os, redis; r = redis.Redis.from_url(os.environ['REDIS_URL']); print(r.ping(), os.environ['REDIS_URL'])"
    )
    out = subprocess.run(
        [sys.executable, "tools/redisserver.py", "--data-dir", str(tmp_path), "--", sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith("redis: redis://127.0.0.1:")
    url = out[0].split()[1]
    assert out[1] == f"True {url}"
    assert not _ping(int(url.rsplit(":", 1)[1].split("/")[0]))
