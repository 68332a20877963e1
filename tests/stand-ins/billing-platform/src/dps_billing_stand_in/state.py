"""The stand-in's state, shared by its HTTP handlers and its Python API."""

from __future__ import annotations

from dataclasses import dataclass

from .faults import Faults
from .idempotency import IdempotencyStore
from .ids import Clock
from .oauth import OAuthGrants
from .recording import Recorder
from .store import ObjectStore
from .webhooks import WebhookSender, application_event


@dataclass(frozen=True)
class Config:
    secret_key: str
    client_id: str
    redirect_uris: tuple[str, ...]
    app_name: str
    platform_account: str  # the account the app's own secret key acts on

    @property
    def livemode(self) -> bool:
        return self.secret_key.startswith("sk_live_")


@dataclass
class State:
    config: Config
    clock: Clock
    grants: OAuthGrants
    store: ObjectStore
    idempotency: IdempotencyStore
    faults: Faults
    recorder: Recorder
    webhooks: WebhookSender

    def install(self, account: str | None = None) -> tuple[str, str]:
        """Installs the app (the Install button); returns the account and a one-time code."""
        account, code = self.grants.install(account)
        self._event("authorized", account)
        return account, code

    def uninstall(self, account: str) -> bool:
        """Removes the app from the account: its tokens stop working, the app hears of it by webhook."""
        if not self.grants.uninstall(account):
            return False
        self._event("deauthorized", account)
        return True

    def _event(self, kind: str, account: str) -> None:
        self.webhooks.send(
            application_event(kind, account, self.config.client_id, self.config.app_name, self.config.livemode)
        )
