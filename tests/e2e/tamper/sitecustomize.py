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
<mode file>.execute, so the test can tell that none came."""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import os
import sys
from pathlib import Path

TARGET = "wallet_app.services.payments"
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


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_tamper(module):
            exec_module(module)
            _tamper(module)

        spec.loader.exec_module = exec_and_tamper  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _Finder())
