"""The settings console's credentials: issued by the api for a person who signed in to the console,
ended when they sign out (or lose access).

A console credential is an API key row of kind ``console`` (the same format, keyed hash, cache,
revocation events and introspection as every key) acting as the person with their own role, and
refused from ``expires_at`` on (the console session's absolute end). It is what gives the console,
and only the console, the scope ``api-keys:manage`` (``dps_common.auth.principal``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from uuid import UUID

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dps_common.auth.scopes import Role
from dps_common.db import Transactions
from dps_common.errors import not_found

from dps_api.db.models.identity import ApiKey, KeyKind, Organization, User
from dps_api.domain.key_access import ConsoleCredential, SignedInPerson
from dps_api.services.identity import add_key, revoke_locked_key
from dps_api.services.people import person_view

# a console session's absolute end (the console's own idle timeout is shorter)
CREDENTIAL_LIFETIME = timedelta(hours=12)


def _person_by_email(session: Session, email: str) -> User | None:
    """The user with this email, ignoring case; in several organizations, the first created."""
    return session.scalar(
        select(User)
        .where(func.lower(User.email) == email.strip().lower())
        .order_by(User.created_at, User.id)
        .limit(1)
    )


class ConsoleCredentialService:
    def __init__(
        self, tx: Transactions, pepper: bytes, now: Callable[[], datetime], forget_key: Callable[[str], None]
    ):
        self._tx = tx
        self._pepper = pepper
        self._now = now
        self._forget_key = forget_key

    def is_known(self, email: str) -> bool:
        """Whether a person may be sent a sign-in link (never says more)."""
        with self._tx.read() as session:
            return _person_by_email(session, email) is not None

    def issue(self, email: str, session_id: UUID) -> ConsoleCredential:
        now = self._now()
        expires_at = now + CREDENTIAL_LIFETIME
        with self._tx() as session:
            user = _person_by_email(session, email)
            if user is None:
                raise not_found("Person")
            organization = session.get(Organization, user.organization_id)
            if organization is None:  # the foreign key holds it
                raise not_found("Organization")
            key, full_key = add_key(
                session, self._pepper, user, Role(user.role), f"console session {session_id}",
                kind=KeyKind.CONSOLE, expires_at=expires_at,
            )
            signed_in = SignedInPerson(person_view(user), organization.id, organization.name)
            return ConsoleCredential(full_key, key.key_id, expires_at, signed_in)

    def revoke(self, key_ref: str) -> None:
        """End a console credential at once, everywhere (a key event). ``key_ref`` is its key id (the
        ``dps_<keyid>`` part, as issued) or its row id. Unknown, already revoked, and keys that are
        not console credentials: nothing happens (an integration key is never touched here)."""
        with self._tx() as session:
            try:
                named = ApiKey.id == UUID(key_ref)
            except ValueError:
                named = ApiKey.key_id == key_ref
            key = session.scalar(
                select(ApiKey).where(named, ApiKey.kind == KeyKind.CONSOLE).with_for_update()
            )
            if key is None:
                return
            revoke_locked_key(session, key, self._now())
            key_id = key.key_id
        self._forget_key(key_id)
