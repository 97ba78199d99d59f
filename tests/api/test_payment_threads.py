"""The payment routes run their blocking work in PAYMENT_THREADS threads per worker (core.threads),
not in the pool every other sync route shares: a burst of them waits for those threads (40 of
them passing one interpreter lock cost a fifth of the worker's CPU), and quotes and executes held
up, e.g. by a hanging node, leave the other routes their threads and status reads theirs."""

import asyncio
import threading

from tests.waits import wait_until
from wallet_app.core import threads
from wallet_app.core.config import get_settings
from wallet_app.services import payments

PARAMS = {"chain_id": "31337", "token_address": "0x" + "11" * 20, "amount": "1"}
QUOTE = {"available": True, "transaction": None, "verifying_contract": "0x" + "22" * 20, "payment_id": "0x" + "33" * 32}


def test_payment_work_waits_for_its_own_threads_and_leaves_the_others_free(monkeypatch, settings_env, client, login):
    monkeypatch.setenv("PAYMENT_THREADS", "1")
    get_settings.cache_clear()
    login("threads@example.com", "en")
    inside: list[int] = []
    release = threading.Event()

    def held_quote(*_args):
        inside.append(threading.get_ident())
        assert release.wait(10), "the held quote was never released"
        return QUOTE

    monkeypatch.setattr(payments, "quote", held_quote)
    answers: list[int] = []
    quotes = [
        threading.Thread(
            target=lambda: answers.append(client.get("/api/v1/payment/available", params=PARAMS).status_code)
        )
        for _ in range(2)
    ]
    loop = client.portal.call(asyncio.get_running_loop)  # the app's loop, whose limiters these are
    try:
        for quote in quotes:
            quote.start()
        wait_until(
            lambda: (
                len(inside) == 1
                and "payment" in threads._limiters.get(loop, {})
                and threads._limiters[loop]["payment"].statistics().tasks_waiting == 1
            ),
            what="one quote in the one payment thread, the other waiting for it",
        )
        assert client.get("/api/v1/chains").status_code == 200  # a sync route of the shared pool meanwhile
        # Status reads have threads of their own (an unknown payment: read, and refused, at once).
        unknown = client.get("/api/v1/payment/status", params={"id": "0x" + "44" * 32, "wait": "1"})
        assert (unknown.status_code, unknown.json()["detail"]) == (404, "unknown_payment")
        assert len(inside) == 1
    finally:
        release.set()  # also when an assertion failed: nothing is left held for the teardown
        for quote in quotes:
            quote.join(10)
    assert answers == [200, 200]
    assert len(inside) == 2
