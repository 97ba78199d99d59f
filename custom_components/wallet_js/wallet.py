"""Python wrappers for wallet.jsx: PIN entry and the actions that need the PIN stay in JS."""

import reflex as rx

_LIBRARY = rx.asset("wallet.jsx", shared=True).importable_path
# The modules wallet.jsx imports must sit beside it in the compiled assets.
for _module in ("vault.js", "keyring.js", "kdf.js", "bytes.js", "errors.js", "focus.js"):
    rx.asset(_module, shared=True)

_NPM = ["ethers@6.17.0", "qrcode@1.5.4"]


class CreateWallet(rx.Component):
    """The onboarding PIN pad: creates, registers and stores the wallet, then on_created(address)."""

    library = _LIBRARY
    tag = "CreateWallet"
    lib_dependencies = _NPM

    messages: rx.Var[dict[str, str]]
    errors: rx.Var[dict[str, str]]  # error code -> text (wallet_app.i18n.error_messages())
    replace_address: rx.Var[str]

    # EventHandler[spec] is typed for pyright only: mypy sees a non-generic class and a call in a type.
    on_created: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]
    on_error: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]


class PinDialog(rx.Component):
    """Asks for the PIN and runs `action` on `payload` in JS; on_done gets the public result
    (address, raw transaction or signature). Actions: unlock; sign_tx (any built transaction,
    its recipient and value shown as decoded in JS, for exactly an approval call its spender or
    operator, amount and (Permit2's) token and expiration, and for exactly an ERC-20 transfer call the
    token's recipient and amount: in token_decimals with token_symbol when expect_chain_id and
    expect_token name the called contract, else in the token's smallest units); sign_approve
    and sign_pay (/payment: the approve and the Pay typed data, refused with REQUEST_MISMATCH
    unless they equal the expect_* values the page showed and the chain's payment contract in
    `chains`)."""

    library = _LIBRARY
    tag = "PinDialog"
    lib_dependencies = _NPM

    open: rx.Var[bool]
    title: rx.Var[str]
    owner: rx.Var[str]
    action: rx.Var[str]
    payload: rx.Var[str]
    # The bundle's build-time chains table (wallet_app.services.chain_table.chains_var()).
    chains: rx.Var[dict[str, dict]]
    # What the page showed (sign_approve, sign_pay): the link's chain, merchant, token, amount in smallest units;
    # sign_tx reads expect_chain_id, expect_token, token_symbol and token_decimals only (unset: raw units).
    expect_chain_id: rx.Var[int]
    expect_merchant: rx.Var[str]
    expect_token: rx.Var[str]
    expect_units: rx.Var[str]
    token_symbol: rx.Var[str]
    token_decimals: rx.Var[int]
    messages: rx.Var[dict[str, str]]
    errors: rx.Var[dict[str, str]]

    on_done: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]
    on_close: rx.EventHandler[rx.event.no_args_event_spec]  # type: ignore[type-arg, valid-type]


class ReceiveQr(rx.Component):
    library = _LIBRARY
    tag = "ReceiveQr"
    lib_dependencies = _NPM

    text: rx.Var[str]
    errors: rx.Var[dict[str, str]]


class DeviceCheck(rx.Component):
    """on_check('backed_up' | 'present' | 'missing') at mount and when the tab becomes visible
    (backed_up: present, with this browser's record of the address's Drive backup)."""

    library = _LIBRARY
    tag = "DeviceCheck"

    owner: rx.Var[str]

    on_check: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]


create_wallet = CreateWallet.create
pin_dialog = PinDialog.create
receive_qr = ReceiveQr.create
device_check = DeviceCheck.create
