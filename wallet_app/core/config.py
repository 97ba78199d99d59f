"""One settings object for the whole server, read from the environment and `.env`.

Production is the default; development (the stand-ins of wallet_app/dev) is asked for with
DEV_MODE=1 (`make run` does). The settings are checked when loaded: get_settings() raises
SettingsError, whose text is one paragraph naming the variable and the fix.
"""

import ipaddress
import os
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from dotenv import dotenv_values
from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV_FILE = ".env"  # in the directory the server starts in
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
# Keys every anvil user knows (its accounts #0 and #1: the dev deployer and the dev relayer);
# never a relayer key outside development.
ANVIL_PUBLIC_KEYS = (
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache
def parse_networks(spec: str) -> tuple[Network, ...]:
    """TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16, ::1' -> networks; ValueError names a malformed entry."""
    networks = []
    for part in spec.split(","):
        if part := part.strip():
            try:
                networks.append(ipaddress.ip_network(part, strict=False))
            except ValueError:
                raise ValueError(f"not an IP address or CIDR network: {part!r}") from None
    return tuple(networks)


ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")


@lru_cache
def parse_addresses(spec: str) -> frozenset[str]:
    """MERCHANT_WEBHOOK_MERCHANTS: '0xAb…, 0xCd…' -> lowercase addresses; ValueError names a malformed entry."""
    found = set()
    for part in spec.split(","):
        if part := part.strip():
            if not ADDRESS.fullmatch(part):
                raise ValueError(f"{part!r} is not a 0x address of 40 hex digits")
            found.add(part.lower())
    return frozenset(found)


def environment() -> dict[str, str]:
    """The variables as the settings see them: the process environment over `.env`'s (read for the
    chains file's ${NAME} references, which are not settings)."""
    dotenv = {k: v for k, v in dotenv_values(ENV_FILE).items() if v is not None}
    return {**dotenv, **os.environ}


# Set by wallet_app.build for `reflex export`: the app module then leaves the database alone
# (building a release beside the running one must not migrate the database under it, nor need it).
BUILDING_ENV = "NEWBL_BUILDING"


class SettingsError(ValueError):
    """The settings are refused; the text says which variable and how to fix it."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=ENV_FILE, extra="ignore")

    database_url: str = f"sqlite:///{REPO_ROOT / 'data' / 'newbl.db'}"
    # Development mode: the stand-ins of wallet_app/dev (/dev-idp, /dev-drive, faucet, anvil's
    # relayer key), only with a loopback PUBLIC_BASE_URL and without a Google client.
    dev_mode: bool = False
    # Google OAuth client; required outside development.
    google_client_id: str | None = None
    google_client_secret: str | None = None
    session_lifetime_seconds: int = 14 * 24 * 3600
    # The API caches a session lookup this long per process; a change made where this process cannot hear
    # of it (services/sessions.py) is seen within it. 0: no cache.
    session_cache_seconds: float = 5.0
    # The origin users reach the app at; also the dev identity provider's issuer base.
    public_base_url: str = "http://localhost:3000"
    chains_file: Path = REPO_ROOT / "chains.dev.json"
    # Where contracts/deploy.py records deployments-<chain_id>.json ("deployments:" placeholders in chains_file).
    deployments_dir: Path = REPO_ROOT / "data"
    # Signing key of the development identity provider (kept on disk so tokens stay verifiable across restarts).
    dev_idp_key_file: Path = REPO_ROOT / "data" / "dev-idp-key.json"
    # Dev only: serve.py starts anvil for loopback chains of chains_file; its state is kept
    # in data/ across restarts unless dev_chain_fresh (the tests' choice).
    dev_chain_fresh: bool = False
    # Dev only: files of the Drive stand-in (/dev-drive), one folder per dev-IdP subject.
    dev_drive_dir: Path = REPO_ROOT / "data" / "dev-drive"

    @property
    def public_origin(self) -> str:
        return self.public_base_url.rstrip("/")

    @property
    def https(self) -> bool:
        return urlsplit(self.public_base_url).scheme == "https"

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        """Origins the browser may call from (websocket CORS, writes): PUBLIC_BASE_URL's, and in
        development the same port under each loopback name (`make run` prints 127.0.0.1)."""
        if not self.dev_mode:
            return (self.public_origin,)
        url = urlsplit(self.public_base_url)
        port = f":{url.port}" if url.port else ""
        aliases = [f"{url.scheme}://{'[::1]' if h == '::1' else h}{port}" for h in LOOPBACK_HOSTS]
        return tuple(dict.fromkeys([self.public_origin, *aliases]))

    # ---- merchant payments (issue 6)
    # The relayer's key pays the gas of pay() transactions. Required outside development
    # (development uses anvil's account #1, set by wallet_app.dev.install).
    relayer_private_key: SecretStr | None = None
    # A relayed transaction not mined after this long is re-sent or replaced (same nonce, higher gas price).
    relayer_stuck_seconds: int = 30
    # How often the relayer process (python -m wallet_app.relayer) sends queued payments and reconciles
    # (short: a queued payment waits for the next pass; an idle pass is two small queries per chain).
    relayer_interval_seconds: float = 0.2
    # How often the relayer process's indexer thread looks for incoming transfers and the receipts
    # of the users' own sends (services.indexer; an idle pass is one eth_blockNumber per chain).
    indexer_interval_seconds: float = 2.0
    # An unused quote is handed out again to the same poll for this long.
    payment_quote_ttl_seconds: int = 900
    # A Pay deadline further than this in the future is refused (the client uses now + 300 s).
    payment_max_deadline_seconds: int = 3600
    # A Pay deadline nearer than this is refused: the relayed transaction needs time to be mined.
    payment_min_deadline_seconds: int = 60
    # Per-user quotas (counted in the database, so they hold across processes); over one: 429.
    # New quotes per hour (a poll answered with the same open quote is not a new one).
    payment_quotes_per_hour: int = 60
    # Executed payments per hour.
    payment_executes_per_hour: int = 30
    # Open quotes (unused, younger than payment_quote_ttl_seconds) at a time.
    payment_open_quotes_max: int = 10
    # The share of a chain's relayer_max_spend_wei_per_hour one user's executed payments may
    # reserve, in percent: without it one account paying itself 1 unit 30 times an hour (a
    # permit needs no ETH) spent the budget and paused payments for everyone.
    payment_user_budget_percent: int = Field(default=10, ge=1, le=100)
    # Threads per worker for quotes and executes, and as many again for payment status reads
    # (core.threads). A burst of executes on the pool of 40 every sync route shares spent a fifth
    # of the worker's CPU passing one interpreter lock between 40 threads; a slow node now holds
    # only these. 8 keeps about 50 executes/s per worker with a node 150 ms away.
    payment_threads: int = Field(default=8, ge=1, le=64)

    # ---- merchants (issue 14 item 6, services/merchant_webhooks.py): when a relayed payment settles ok,
    # the relayer POSTs it here, signed with HMAC-SHA256 of MERCHANT_WEBHOOK_SECRET (X-Newbl-Signature).
    merchant_webhook_url: str | None = None
    merchant_webhook_secret: SecretStr | None = None
    # The merchant addresses (comma-separated) whose payments are posted. Anyone can pay any
    # address with any ref through the app, so a webhook for every payment would tell the
    # merchant's shop "paid" for a ref someone paid to themselves.
    merchant_webhook_merchants: str = ""
    # Attempts of one delivery before it is given up (status 'failed' in merchant_webhooks).
    merchant_webhook_max_attempts: int = 10
    # The wait before the first retry; it doubles with every failed attempt, up to an hour.
    merchant_webhook_retry_seconds: int = 10

    # ---- /sign (issue 11): a link whose gas price is above this multiple of the node's is refused.
    sign_max_gas_price_multiple: float = 3.0
    # Development only (ignored outside DEV_MODE): /sign without the preview and its checks, the
    # baseline of bench/sign_preview.py.
    dev_sign_preview_off: bool = False
    # Development only (ignored outside DEV_MODE): GET /dev-bench/ceiling, a bare Starlette route in the
    # app's process, the ceiling of bench/load.py.
    dev_bench_ceiling: bool = False

    # ---- rate limits (issue 12, core/ratelimit.py): "N/second|minute|hour", several joined by ";";
    # a per-second part spreads out what a minute allows (a burst of costly calls slows everyone).
    # Counters, fast refusals and spent login attempts in Redis when set (shared by all workers, and
    # Reflex's state manager: rxconfig.py), else in this process's memory.
    redis_url: str | None = None
    # Sign-in attempts per client IP (/auth/google, /auth/google/code); NATs put many users on one IP.
    rate_limit_sign_in: str = "60/minute"
    # Wallet address registrations per user (one per wallet created or restored).
    rate_limit_address: str = "10/minute"
    # Token metadata lookups per user (the Add token dialog probes once per address typed).
    rate_limit_token_metadata: str = "2/second;60/minute"
    # Tokens added per user.
    rate_limit_token_add: str = "2/second;30/minute"
    # Transfers built per user (/tx/build, the Send page's Review).
    rate_limit_tx_build: str = "2/second;60/minute"
    # Signed transactions submitted per user (/tx/submit, the Sign page, the payment page's approve):
    # each is broadcast and becomes an activity entry.
    rate_limit_tx_submit: str = "2/second;30/minute"
    # /sign page previews per user: each reads the chain (fee, balance, nonces) and simulates the call.
    rate_limit_sign_preview: str = "2/second;60/minute"
    # Balance reads per user (/assets, the Home page's token list): each is an eth_call per chain
    # (and, when a token's balanceOf fails, one per token), on the operator's node quota.
    rate_limit_balances: str = "2/second;60/minute"
    # Pending sends' receipts read per user when the activity is listed (/activities, the Activity
    # page, which polls every 2 s while a send is pending): over it the entries are listed as stored.
    rate_limit_activity_refresh: str = "2/second;60/minute"
    # New websockets per client IP (an IPv6 client by its /64): each page load opens one, and each
    # keeps a client state in Redis for an hour (core/sockets.py).
    rate_limit_socket_open: str = "10/second;120/minute"
    # Payment quotes per user: the payment page polls once a second for up to a minute after an approve.
    rate_limit_payment_quote: str = "2/second;120/minute"
    # Payment executions per user.
    rate_limit_payment_execute: str = "2/second;30/minute"
    # Merchant payment look-ups per client IP (GET /merchant/payments: public, each a few chain reads).
    rate_limit_merchant_payments: str = "5/second;120/minute"
    # A user's token list holds at most this many tokens (each is read on every /assets).
    max_tokens_per_user: int = 50

    # ---- the Reflex websocket (core/sockets.py), which the limits above do not cover.
    # Open websockets (one per tab) per client IP per worker; the next handshake is refused (403).
    # Far above a household's or an office's tabs behind one NAT.
    socket_max_per_ip: int = Field(default=50, ge=1)
    # Messages per websocket: a burst, refilled at a steady rate a second; one over closes the
    # connection (1008). A load of /home sends 2, a move in the bottom navigation 3, typing a few a
    # second (inputs are debounced): a person stays far below either.
    socket_event_burst: int = Field(default=60, ge=1)
    socket_event_rate: float = Field(default=20.0, gt=0)
    # The longest websocket message, in characters (engine.io's max_http_buffer_size; longer closes
    # the connection). The longest the page sends is /sign's signed transaction (up to 100,002 hex
    # characters) with the link in its router data twice (up to 64,000 each): about 230,000.
    socket_max_message_chars: int = Field(default=500_000, ge=10_000)

    # ---- behind a reverse proxy (issue 13, core/proxy.py): IPs/CIDRs, comma-separated, whose
    # X-Forwarded-For / X-Forwarded-Proto are believed (client IP of the rate limits, scheme); empty: none.
    trusted_proxies: str = ""

    @model_validator(mode="after")
    def _check_mode(self) -> "Settings":
        problems = refusals(self)
        if problems:
            raise ValueError(" ".join(problems))
        return self


def url_for_logs(url: str) -> str:
    """What logs and error texts say of a URL: its scheme, host and port only. A provider's RPC URL
    keeps its API key in the path or query (Infura's /v3/<key>, Alchemy's /v2/<key>), a merchant's
    webhook URL may keep a token there, and either may carry a user and password."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "(a URL that does not parse)"
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def browser_origin(url: str) -> str | None:
    """`url` as a browser writes its origin (the Origin header, which the websocket and every write
    are checked against exactly): lowercase scheme and host, no default port, nothing after the
    host. None when it is no http(s) origin (a path, a query, a user or password in it)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    scheme, host = parts.scheme.lower(), parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


def refusals(s: Settings) -> list[str]:
    """Why these settings must not serve, one sentence each (empty: fine)."""
    problems = []
    loopback = urlsplit(s.public_base_url).hostname in LOOPBACK_HOSTS
    origin = browser_origin(s.public_base_url)
    if origin != s.public_origin:
        problems.append(
            f"PUBLIC_BASE_URL ({s.public_base_url}) is not an origin as browsers send it, which every websocket "
            "and write is checked against: "
            + (f"write {origin}." if origin else "write https://host or https://host:port, without a path.")
        )
    try:
        parse_networks(s.trusted_proxies)
    except ValueError as e:
        problems.append(f"TRUSTED_PROXIES: {e}; write IP addresses or CIDR networks joined by commas.")
    if s.merchant_webhook_url:
        hook = urlsplit(s.merchant_webhook_url)
        if hook.scheme not in ("http", "https") or not hook.hostname:
            problems.append("MERCHANT_WEBHOOK_URL is not an http(s) URL: set it to the merchant's https://… endpoint.")
        secret = s.merchant_webhook_secret.get_secret_value() if s.merchant_webhook_secret else ""
        if len(secret) < 16:
            problems.append(
                "MERCHANT_WEBHOOK_URL is set but MERCHANT_WEBHOOK_SECRET is missing or shorter than 16 characters: "
                "the merchant checks every webhook's HMAC with it; set a long random secret shared with the merchant."
            )
        try:
            merchants = parse_addresses(s.merchant_webhook_merchants)
        except ValueError as e:
            problems.append(f"MERCHANT_WEBHOOK_MERCHANTS: {e}; write the merchant's 0x addresses joined by commas.")
        else:
            if not merchants:
                problems.append(
                    "MERCHANT_WEBHOOK_URL is set but MERCHANT_WEBHOOK_MERCHANTS is empty: name the merchant's own "
                    "0x addresses (comma-separated); only payments to them are posted."
                )
    if s.merchant_webhook_max_attempts < 1 or s.merchant_webhook_retry_seconds < 1:
        problems.append("MERCHANT_WEBHOOK_MAX_ATTEMPTS and MERCHANT_WEBHOOK_RETRY_SECONDS must be at least 1.")
    if s.dev_mode:
        if not loopback:
            problems.append(
                f"DEV_MODE is on but PUBLIC_BASE_URL ({s.public_base_url}) is not on loopback: the development "
                "stand-ins let anyone sign in as any e-mail, so they run only at localhost, 127.0.0.1 or [::1]; "
                "unset DEV_MODE on a public host."
            )
        if s.google_client_id:
            problems.append(
                "DEV_MODE is on and GOOGLE_CLIENT_ID is set: development sign-in would ignore the Google client; "
                "unset GOOGLE_CLIENT_ID for development, or unset DEV_MODE to use Google."
            )
        return problems
    if not s.https and not loopback:
        problems.append(
            f"PUBLIC_BASE_URL ({s.public_base_url}) is not https: outside development the session cookie is "
            "Secure, which browsers refuse over plain http; serve over https (e.g. behind a TLS proxy) and set "
            "PUBLIC_BASE_URL=https://..., or set DEV_MODE=1 for local development."
        )
    key = s.relayer_private_key.get_secret_value() if s.relayer_private_key else ""
    if key and not re.fullmatch(r"(0x)?[0-9a-fA-F]{64}", key):
        problems.append("RELAYER_PRIVATE_KEY is not a private key: set it to 64 hex digits (0x optional).")
    elif key and "0x" + key.lower().removeprefix("0x") in ANVIL_PUBLIC_KEYS:
        problems.append(
            "RELAYER_PRIVATE_KEY is one of anvil's public test keys, which anyone can spend from: "
            "outside development use a key of your own."
        )
    missing = [
        name
        for name, value in (
            ("GOOGLE_CLIENT_ID", s.google_client_id),
            ("GOOGLE_CLIENT_SECRET", s.google_client_secret),
            ("RELAYER_PRIVATE_KEY", key),
        )
        if not value
    ]
    if missing:
        problems.append(
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set: production needs a Google OAuth "
            "client (GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET) and the relayer's key (RELAYER_PRIVATE_KEY); "
            "set them, or set DEV_MODE=1 for local development (`make run` does)."
        )
    return problems


def load_settings() -> Settings:
    """Settings() with a refusal as one SettingsError paragraph instead of pydantic's report."""
    try:
        return Settings()
    except ValidationError as e:
        parts = []
        for err in e.errors():
            if err["type"] == "value_error" and not err["loc"]:
                parts.append(str(err["ctx"]["error"]))
            else:
                parts.append(f"{'.'.join(str(x) for x in err['loc']).upper()}: {err['msg']}.")
        raise SettingsError("Refusing to start: " + " ".join(parts)) from None


@lru_cache
def get_settings() -> Settings:
    return load_settings()
