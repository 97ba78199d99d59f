"""Token transfers: build an unsigned transfer for the browser to sign, broadcast the signed one.

Shared by the REST routes (/api/v1/tx) and the Reflex handlers; failures raise AppError.
"""

from __future__ import annotations

import logging
from typing import Any

from wallet_app.errors import AppError, logged_code
from wallet_app.models import User
from wallet_app.services import accounts, activity, pending, tokens, txpreview
from wallet_app.services import chain as chain_svc
from wallet_app.services.eth import parse_address, parse_uint256

log = logging.getLogger(__name__)


def _address_of(user: User | int) -> tuple[User, str]:
    """The user's row and registered address."""
    u = accounts.load_user(user)
    if not u.address:
        raise AppError("no_address", "the user has not registered a wallet address yet")
    return u, u.address


def build_transfer(user: User | int, chain_id: Any, token_address: Any, to: Any, amount: Any) -> dict:
    """An unsigned legacy ERC-20 transfer {chain_id, to, data, value, nonce, gas_limit, gas_price}
    (decimal strings) from the user's address; `amount` in the token's smallest unit. Rate-limited."""
    accounts.hit("tx_build", user)
    _, address = _address_of(user)
    chain = tokens.get_chain(chain_id)
    token = parse_address(token_address, empty_is_zero=True)
    if token == chain.native_token().token_address:
        raise AppError("native_blocked", "native coin transfers are not supported")
    recipient = parse_address(to, code="invalid_recipient", allow_zero=True)
    units = parse_uint256(amount)
    return chain_svc.build_erc20_transfer(chain, address, token, recipient, units)


def submit_signed(user: User | int, raw_tx: Any, replaces: Any = None) -> dict:
    """Checks that the signed transaction is from the user's address and for a configured
    chain, records its activity entry (pending), broadcasts it once (never retried), returns
    {tx_hash}. `replaces`: the id of the user's pending entry this one speeds up or cancels (same
    nonce, a higher price: services.pending.check_replacement); the new entry is linked to it.

    The entry comes first: nothing else records a send (the indexer records what others send),
    so a worker dying or the database failing after the broadcast lost it for good. The same bytes
    submitted again find their entry (uq_activities_own_tx). A transaction the node refuses takes
    its new entry with it; one whose broadcast got no answer stays pending, and the status
    refresh settles it (services.pending: mined, replaced, or dropped when the node never got it)."""
    accounts.hit("tx_submit", user)
    u, address = _address_of(user)
    decoded = chain_svc.decode_raw_tx(raw_tx)
    if decoded.sender.lower() != address.lower():
        raise AppError("sender_mismatch", "transaction is not signed by the session's address")
    if decoded.chain_id is None:
        raise AppError("unsupported_chain", "transaction has no EIP-155 chain id")
    chain = tokens.get_chain(decoded.chain_id)
    _refuse_priced_out(chain, decoded)
    replaced = None
    if replaces is not None:
        pending.check_replacement(u, decoded, replaces)
        replaced = activity.get_entry(int(replaces))
    elif pending.nonce_held(u, decoded):
        raise AppError("sign_nonce_pending", f"nonce {decoded.nonce} is held by another pending send")
    try:
        entry_id = activity.record_submitted(u, chain, decoded, decoded.tx_hash, replaces=replaced)
    except AppError:
        raise
    except Exception as e:  # nothing is broadcast without its entry: the user may try again
        raise AppError(logged_code(log, "recording a send", e)) from e
    try:
        tx_hash = chain_svc.submit_raw(chain, raw_tx, expected_sender=address)
    except AppError as e:
        if entry_id is not None and e.code != "rpc_unavailable":  # refused, and not the node's
            _forget(entry_id)
        worded = pending.node_refusal(e) if replaced is not None else e  # a replacement's own words first
        worded = node_words(worded, chain.native_symbol)
        if worded is e:
            raise
        raise worded from e
    if entry_id is None:  # sent before: an entry the status refresh found dropped is pending again
        try:
            activity.sent_again(u, chain, tx_hash)
        except Exception:  # the transaction is out: a bookkeeping failure must not hide its hash
            log.exception("could not mark %s pending again", tx_hash)
    return {"tx_hash": tx_hash}


# The node's words for a gas price below its next block's base fee (anvil, reth; geth at execution).
BASE_FEE_REFUSAL = "less than block base fee"


def node_words(error: AppError, native_symbol: str) -> AppError:
    """The node's refusal of a send in words the user can act on, else `error` itself: a price below
    its next block's base fee (fee_outdated: the fee rose after the check), too little of the native
    coin for gas x price + value (fee_unaffordable: the balance fell after the preview, e.g. another
    tab's send, and the node said so only after the PIN), a nonce another transaction took meanwhile
    (sign_nonce_used: the same wallet in another app sent one after the preview)."""
    if error.code != "rejected":
        return error
    text = error.message.lower()
    if BASE_FEE_REFUSAL in text:
        return AppError("fee_outdated", error.message)
    if "insufficient funds" in text:
        return AppError("fee_unaffordable", error.message, symbol=native_symbol)
    if "nonce too low" in text:  # not this very transaction (chain.submit_raw returns its hash then)
        return AppError("sign_nonce_used", error.message)
    return error


def _refuse_priced_out(chain: chain_svc.ChainConfig, decoded: chain_svc.DecodedTx) -> None:
    """fee_outdated for a transaction priced below the next block's base fee (txpreview.fee_outdated:
    signed on a /sign page left open while the fee rose) that the node does not hold already (the same
    bytes sent again, or mined: sent before the rise). Broadcast, anvil refused it ("The network
    rejected the transaction.") and geth would keep it, unmined, as pending. A node that does not
    answer decides nothing here: the broadcast tells."""
    try:
        refused = txpreview.fee_outdated(decoded.gas_price, chain_svc.next_base_fee(chain))
        if refused is None or chain_svc.transaction_known(chain_svc.web3_for(chain), decoded.tx_hash):
            return
    except Exception:  # noqa: BLE001 - no answer (or a garbled one): the broadcast tells
        return
    raise refused


def _forget(entry_id: int) -> None:
    """Removes the entry of a transaction the node refused (no send of it is shown). Should that
    fail, the entry stays pending until the status refresh finds it dropped."""
    try:
        activity.delete_entry(entry_id)
    except Exception:
        log.exception("could not remove the entry %s of a refused transaction", entry_id)


def build_replacement(user: User | int, activity_id: Any, kind: Any) -> dict:
    """The unsigned speed-up or cancel of a pending send (services.pending). Rate-limited like a build."""
    accounts.hit("tx_build", user)
    return pending.build_replacement(user, activity_id, kind)
