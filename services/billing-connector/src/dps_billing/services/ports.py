"""What the use cases need from the billing platform's OAuth endpoints, as protocols: the platform
package (``dps_billing.adapters.billing_platform``) provides them, tests may pass their own."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from sqlalchemy.orm import Session

from dps_billing.domain.events import RecordedEvent


class Grant(Protocol):
    """A token answer: the account the app was installed in, and its tokens."""

    @property
    def access_token(self) -> str: ...

    @property
    def refresh_token(self) -> str: ...

    @property
    def account_id(self) -> str: ...

    @property
    def livemode(self) -> bool: ...

    @property
    def expires_at(self) -> datetime:
        """When the access token stops working (the platform sends no expiry: recorded at the call)."""


class OAuthApp(Protocol):
    """The app's own calls (authenticated with its secret key). Refusals raise
    ``dps_billing.adapters.billing_platform.errors.OAuthRejected`` (``InvalidGrant`` for a used, expired or revoked
    code or refresh token); unreachable: ``PlatformUnavailable``."""

    def exchange_code(self, code: str) -> Grant: ...

    def refresh(self, refresh_token: str) -> Grant: ...

    def deauthorize(self, account_id: str) -> None: ...


class Outbox(Protocol):
    """Where a use case records its events (``dps_billing.adapters.outbox``, given by the composition
    root): it renders ``subject``, the view after the change, as the catalogue's schema for
    ``event_type`` says, and writes the event in ``session``'s transaction. Use cases never render."""

    def record(self, session: Session, event_type: str, organization_id: UUID, subject: Any,
               now: datetime) -> RecordedEvent: ...
