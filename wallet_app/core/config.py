"""One settings object for the whole server, read from the environment and `.env`."""

from functools import lru_cache
from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[2]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    database_url: str = f"sqlite:///{REPO_ROOT / 'data' / 'newbl.db'}"
    # Absent Google credentials mean development sign-in (/dev-idp and /dev-drive).
    google_client_id: str | None = None
    google_client_secret: str | None = None
    session_lifetime_seconds: int = 14 * 24 * 3600
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
    def dev_mode(self) -> bool:
        return not self.google_client_id

    @property
    def public_origin(self) -> str:
        return self.public_base_url.rstrip("/")

    # ---- merchant payments (issue 6)
    # The relayer's key pays the gas of pay() transactions. Required outside development
    # (there the default is anvil's account #1, set by wallet_app.dev.install).
    relayer_private_key: SecretStr | None = None
    # A relayed transaction not mined after this long is re-sent or replaced (same nonce, higher gas price).
    relayer_stuck_seconds: int = 30
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

    # ---- /sign (issue 11): a link whose gas price is above this multiple of the node's is refused.
    sign_max_gas_price_multiple: float = 3.0
    # Development only (ignored once Google sign-in is configured): /sign without the preview and
    # its checks, the baseline of bench/sign_preview.py.
    dev_sign_preview_off: bool = False


@lru_cache
def get_settings() -> Settings:
    return Settings()
