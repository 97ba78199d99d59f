"""TEMPORARY (branch h-pages; the integrator deletes this file at the merge).

The service names of the shared brief (services.tokens / transfers / activity, raising only
AppError) mapped onto today's services, so the page states run before the server's renames
land. At the merge, `from wallet_app.services._pages_tmp_shims import X` becomes
`from wallet_app.services import X`.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

from wallet_app.errors import AppError
from wallet_app.services import accounts as _accounts
from wallet_app.services import amounts as _amounts
from wallet_app.services import backups as _backups
from wallet_app.services import chain as _chain
from wallet_app.services import payments as _payments
from wallet_app.services import txlink as _txlink
from wallet_app.services import wallet as _wallet


def _app_errors(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (_chain.ChainError, _payments.PaymentError) as e:
            raise AppError(e.code, e.message) from e
        except _amounts.AmountError as e:
            raise AppError(e.code, **e.params) from e
        except _txlink.TxLinkError as e:
            raise AppError("invalid_tx", str(e)) from e
        except _accounts.NotFound as e:
            raise AppError("not_authenticated") from e
        except _backups.NoAddress as e:
            raise AppError("no_address") from e

    return wrapper


def _token_info(user, chain: _chain.ChainConfig, address: str) -> _chain.TokenInfo | None:
    """Configured tokens, then the user's list, then the chain; None when it is no token."""
    for info in chain.tokens:
        if info.token_address.lower() == address.lower():
            return info
    for item in _wallet.user_tokens(user):
        if item["chain_id"] == chain.chain_id and item["token_address"].lower() == address.lower():
            return _chain.TokenInfo(item["token_address"], item["token_symbol"], item["token_name"],
                                    item["token_decimals"])
    try:
        return _chain.token_metadata(chain, address)
    except _chain.ChainError as e:
        if e.code == "rpc_unavailable":
            raise
        return None


def _check_send_form(chain_id, token, recipient, amount):
    try:
        return _txlink.check_send_form(chain_id, token, recipient, amount)
    except _txlink.SendFormError as e:
        if e.amount_error is not None:
            raise AppError(e.amount_error.code, **e.amount_error.params) from e
        raise


_w = _app_errors
tokens = SimpleNamespace(list_chains=_w(_wallet.list_chains), user_tokens=_w(_wallet.user_tokens),
                         token_metadata=_w(_wallet.token_metadata), add_token=_w(_wallet.add_token),
                         asset_balances=_w(_wallet.asset_balances), token_info=_w(_token_info))
transfers = SimpleNamespace(build_transfer=_w(_wallet.build_transfer), submit_signed=_w(_wallet.submit_signed),
                            decode_token_call=_wallet.decode_token_call)
activity = SimpleNamespace(activities=_w(_wallet.activities))
payments = SimpleNamespace(quote=_w(_payments.quote), execute=_w(_payments.execute), status=_w(_payments.status),
                           pay_typed_data=_payments.pay_typed_data)
txlink = SimpleNamespace(encode_tx=_w(_txlink.encode_tx), decode_tx=_w(_txlink.decode_tx),
                         check_send_form=_w(_check_send_form), SendFormError=_txlink.SendFormError)
amounts = SimpleNamespace(parse_units=_w(_amounts.parse_units), format_balance=_amounts.format_balance)
chains = SimpleNamespace(get_chain=_w(_chain.get_chain), get_chains=_w(_chain.get_chains))
backups = SimpleNamespace(info=_w(_backups.info))
accounts = SimpleNamespace(set_address=_w(_accounts.set_address), set_locale=_w(_accounts.set_locale))
