"""tools/pgserver.py: the private PostgreSQL server (TEST_DATABASE=pg only: it needs postgresql)."""

import shutil
import socket
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.conftest import needs_pg
from tools.pgserver import PgError, PgServer

pytestmark = needs_pg


@pytest.fixture
def base():
    """A data folder the server user may reach (pytest's tmp_path is root's alone)."""
    parent = Path(tempfile.mkdtemp(prefix="newbl-pg-test-"))
    parent.chmod(0o755)
    yield parent / "pg"
    shutil.rmtree(parent, ignore_errors=True)


def test_data_dir_survives_a_restart_and_a_temp_server_leaves_nothing(base):
    with PgServer(base) as server:
        url = server.ensure_database("app")
        with psycopg.connect(url.replace("+psycopg", "")) as conn:
            conn.execute("CREATE TABLE kept (x int)")
            conn.execute("INSERT INTO kept VALUES (7)")
    with PgServer(base) as server:  # same data, same password, a new port
        assert server.ensure_database("app") != url
        with psycopg.connect(server.url("app").replace("+psycopg", "")) as conn:
            assert conn.execute("SELECT x FROM kept").fetchone() == (7,)
    assert (base / "password").stat().st_mode & 0o077 == 0  # its owner's only

    temp = PgServer(temp=True).start()
    base, port = temp.base, temp.port
    temp.stop()
    assert not base.exists()
    with socket.socket() as s:  # stopped: nothing listens there any more
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_a_port_in_use_is_refused(base):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(PgError, match="in use"):
            PgServer(base, port=taken.getsockname()[1]).start()
