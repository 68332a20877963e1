"""What the use cases need from the billing platform's OAuth endpoints, as protocols: the platform
package (``dps_billing.platform``) provides them, tests may pass their own."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


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
    ``dps_billing.platform.errors.OAuthRejected`` (``InvalidGrant`` for a used, expired or revoked
    code or refresh token); unreachable: ``PlatformUnavailable``."""

    def exchange_code(self, code: str) -> Grant: ...

    def refresh(self, refresh_token: str) -> Grant: ...

    def deauthorize(self, account_id: str) -> None: ...
