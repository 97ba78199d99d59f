"""Test only (never on a production path): Python loads this module at start-up in every process
of an e2e app server started with tests/e2e/tamper on PYTHONPATH (test_payment.py's second
server). When wallet_app.services.payments is imported it wraps the payment service so that it
answers as a hostile or broken server would, as the mode file named by NB_E2E_TAMPER_FILE says
at the time of each call (the test writes it; missing or empty: the service is unchanged):

  approve_unlimited  the quote's approve transaction approves 2^256-1
  approve_spender    the quote's approve transaction approves another spender
  domain_chain       the Pay typed data's domain carries another chainId
  domain_contract    the quote's verifying_contract is another contract
  permit_unlimited   the quote's Permit allows 2^256-1
  permit_spender     the quote's Permit names another spender

Every call of payments.execute (a Pay signature reaching the server) is counted in
<mode file>.execute, so the test can tell that none came.

And wallet_app.services.sessions, for one mode:

  late_session_lookup  the next Reflex handler's session lookup (user_from_socket_cookie) takes the
                       mode (renames the file to <mode file>.taken) and waits until the websocket
                       that sent its event has closed and the test has written <mode file>.go
                       (the tab's next page is connected), then reads: an event of a page the
                       user left, handled late. <mode file>.done is written once it has read."""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import os
import sys
import time
from pathlib import Path

PAYMENTS = "wallet_app.services.payments"
SESSIONS = "wallet_app.services.sessions"
LATE_LOOKUP_WAIT_SECONDS = 30
OTHER = "0x000000000000000000000000000000000000dEaD"
UNLIMITED = 2**256 - 1


def _mode() -> str:
    path = os.environ.get("NB_E2E_TAMPER_FILE")
    try:
        return Path(path).read_text().strip() if path else ""
    except FileNotFoundError:
        return ""


def _approve_data(spender: str, amount: int) -> str:
    return "0x095ea7b3" + spender[2:].lower().rjust(64, "0") + f"{amount:064x}"


def _tamper(payments) -> None:
    quote, pay_typed_data, execute = payments.quote, payments.pay_typed_data, payments.execute

    @functools.wraps(quote)
    def tampered_quote(*args, **kwargs):
        result = quote(*args, **kwargs)
        mode, tx = _mode(), result.get("transaction")
        if tx and mode == "approve_unlimited":
            result["transaction"] = {**tx, "data": _approve_data(result["verifying_contract"], UNLIMITED)}
        elif tx and mode == "approve_spender":
            result["transaction"] = {**tx, "data": _approve_data(OTHER, int(tx["data"][74:], 16))}
        elif mode == "domain_contract":
            result["verifying_contract"] = OTHER
        elif result.get("permit") and mode in ("permit_unlimited", "permit_spender"):
            message = dict(result["permit"]["message"])
            message.update({"value": str(UNLIMITED)} if mode == "permit_unlimited" else {"spender": OTHER})
            result["permit"] = {**result["permit"], "message": message}
        return result

    @functools.wraps(pay_typed_data)
    def tampered_typed_data(chain_id, verifying_contract, message):
        return pay_typed_data(chain_id + 1 if _mode() == "domain_chain" else chain_id, verifying_contract, message)

    @functools.wraps(execute)
    def counted_execute(*args, **kwargs):
        path = os.environ.get("NB_E2E_TAMPER_FILE")
        if path:
            with open(path + ".execute", "a") as f:
                f.write("execute\n")
        return execute(*args, **kwargs)

    payments.quote, payments.pay_typed_data, payments.execute = tampered_quote, tampered_typed_data, counted_execute


def _take_mode(mode: str) -> bool:
    """Whether the mode file says `mode`; it is then taken (renamed), so only one call has it."""
    path = os.environ.get("NB_E2E_TAMPER_FILE")
    if not path or _mode() != mode:
        return False
    try:
        os.rename(path, path + ".taken")
    except FileNotFoundError:  # another call took it
        return False
    return True


def _tamper_sessions(sessions) -> None:
    lookup = sessions.user_from_socket_cookie

    @functools.wraps(lookup)
    def late_lookup(cookie_header):
        if _take_mode("late_session_lookup"):
            handle = sessions.parse_cookie_header(cookie_header).get(sessions.SOCKET_COOKIE)
            go = Path(os.environ["NB_E2E_TAMPER_FILE"] + ".go")
            deadline = time.monotonic() + LATE_LOOKUP_WAIT_SECONDS
            while (handle in sessions._socket_tokens or not go.exists()) and time.monotonic() < deadline:
                time.sleep(0.05)  # polling for the socket's close and the test's go, not a fixed wait
            user = lookup(cookie_header)
            Path(os.environ["NB_E2E_TAMPER_FILE"] + ".done").write_text("done")
            return user
        return lookup(cookie_header)

    sessions.user_from_socket_cookie = late_lookup


TAMPERS = {PAYMENTS: _tamper, SESSIONS: _tamper_sessions}


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in TAMPERS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_tamper(module):
            exec_module(module)
            TAMPERS[fullname](module)

        spec.loader.exec_module = exec_and_tamper  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _Finder())
