"""The payment routes run their blocking work in PAYMENT_THREADS threads per worker (core.threads),
not in the pool every other sync route shares: a burst of them waits for those threads (40 of
them passing one interpreter lock cost a fifth of the worker's CPU), and payment work held up,
e.g. by a hanging node, leaves the other routes their threads."""

import threading
import time

from wallet_app.core import threads
from wallet_app.core.config import get_settings
from wallet_app.services import payments

PARAMS = {"chain_id": "31337", "token_address": "0x" + "11" * 20, "amount": "1"}


def wait_for(cond, what: str) -> None:
    deadline = time.monotonic() + 10
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)  # polling interval, not a fixed wait


def test_payment_work_waits_for_its_own_threads_and_leaves_the_others_free(monkeypatch, settings_env, client, login):
    monkeypatch.setenv("PAYMENT_THREADS", "1")
    get_settings.cache_clear()
    login("threads@example.com", "en")
    inside: list[int] = []
    release = threading.Event()

    def held_quote(*_args):
        inside.append(threading.get_ident())
        assert release.wait(10), "the held quote was never released"
        return {
            "available": True,
            "transaction": None,
            "verifying_contract": "0x" + "22" * 20,
            "payment_id": "0x" + "33" * 32,
        }

    monkeypatch.setattr(payments, "quote", held_quote)
    answers: list[int] = []
    quotes = [
        threading.Thread(
            target=lambda: answers.append(client.get("/api/v1/payment/available", params=PARAMS).status_code)
        )
        for _ in range(2)
    ]
    for quote in quotes:
        quote.start()
    wait_for(
        lambda: (
            len(inside) == 1
            and threads._limiters
            and all(limiter.statistics().tasks_waiting == 1 for limiter in threads._limiters.values())
        ),
        "one quote in the one payment thread, the other waiting for it",
    )
    assert client.get("/api/v1/chains").status_code == 200  # a sync route of the shared pool meanwhile
    assert len(inside) == 1
    release.set()
    for quote in quotes:
        quote.join(10)
    assert answers == [200, 200]
    assert len(inside) == 2
