"""Organizations, users and API keys: the admin command line's use cases and the key store.

Rotating or revoking a key records a key event (``dps_common.auth.revocations``) in the outbox, in
the same transaction: every process of every service drops the key from its cache when it arrives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from dps_common.auth.cache import KeyRecord
from dps_common.auth.keys import (
    PREFIX,
    format_key,
    generate_key_id,
    generate_secret,
    hash_secret,
)
from dps_common.auth.principal import Principal
from dps_common.auth.revocations import KEY_REVOKED, KEY_ROTATED, key_event_data
from dps_common.auth.scopes import Role
from dps_common.db import Transactions
from dps_common.errors import Conflict, ValidationFailed, not_found

from dps_api.db.models.identity import ApiKey, KeyKind, KeyStatus, Organization, User
from dps_api.services.outbox import record_internal_event


@dataclass(frozen=True)
class IssuedKey:
    """A key as issued or rotated: ``secret`` is the full key string, shown once."""

    id: UUID
    name: str
    role: Role
    user_id: UUID
    key_prefix: str
    secret: str


def parse_role(raw: Role | str) -> Role:
    """A role, also in the spellings people type: ``view_only``, ``View-Only``."""
    if isinstance(raw, Role):
        return raw
    try:
        return Role(raw.replace("_", " ").replace("-", " ").lower())
    except ValueError:
        raise ValidationFailed(f"role must be one of: {', '.join(r.value for r in Role)}") from None


class DatabaseKeyStore:
    """Finds an active, unexpired key by its id, with the organization and user it acts for."""

    def __init__(self, tx: Transactions, now: Callable[[], datetime]):
        self._tx = tx
        self._now = now

    def find(self, key_id: str) -> KeyRecord | None:
        now = self._now()
        with self._tx() as session:
            row = session.execute(
                select(
                    ApiKey.id, ApiKey.secret_hash, ApiKey.role, ApiKey.user_id, ApiKey.organization_id,
                    ApiKey.kind, ApiKey.expires_at, Organization.name, User.api_key_access,
                )
                .join(Organization, Organization.id == ApiKey.organization_id)
                .join(User, User.id == ApiKey.user_id)
                .where(
                    ApiKey.key_id == key_id,
                    ApiKey.status == KeyStatus.ACTIVE,
                    or_(ApiKey.expires_at.is_(None), ApiKey.expires_at > now),
                )
            ).one_or_none()
            if row is None:
                return None
            # lastUsedAt is refreshed once per cache load, never on the hot path
            session.execute(update(ApiKey).where(ApiKey.id == row.id).values(last_used_at=now))
        principal = Principal(
            row.organization_id, row.name, row.user_id, Role(row.role), key_id,
            console=row.kind == KeyKind.CONSOLE, api_key_access=row.api_key_access,
        )
        return KeyRecord(row.secret_hash, principal, row.expires_at)


def add_key(
    session: Session, pepper: bytes, user: User, role: Role, name: str,
    *, kind: KeyKind = KeyKind.INTEGRATION, expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """A new active key acting as ``user`` (in the caller's transaction): its row and the full key
    string, which exists only in this answer (the row holds its keyed hash)."""
    key_id, secret = generate_key_id(), generate_secret()
    key = ApiKey(
        organization_id=user.organization_id,
        user_id=user.id,
        name=name,
        role=role.value,
        key_id=key_id,
        secret_hash=hash_secret(pepper, secret),
        status=KeyStatus.ACTIVE,
        kind=kind.value,
        expires_at=expires_at,
    )
    session.add(key)
    session.flush()
    return key, format_key(key_id, secret)


def rotate_locked_key(session: Session, pepper: bytes, key: ApiKey, now: datetime) -> tuple[str, str]:
    """A new key id and secret on an active key locked by the caller, with the key event in the same
    transaction: the old key id (for the caller to forget once committed) and the full new key."""
    old_key_id = key.key_id
    key.key_id, secret = generate_key_id(), generate_secret()
    key.secret_hash = hash_secret(pepper, secret)
    key.rotated_at = now
    record_internal_event(session, KEY_ROTATED, key.organization_id, key_event_data(str(key.id), old_key_id), now)
    return old_key_id, format_key(key.key_id, secret)


def revoke_locked_key(session: Session, key: ApiKey, now: datetime) -> None:
    """Revoke a key locked by the caller, with the key event in the same transaction; a revoked key
    stays as it is (no second event)."""
    if key.status != KeyStatus.REVOKED:
        key.status = KeyStatus.REVOKED
        key.revoked_at = key.revoked_at or now
        record_internal_event(session, KEY_REVOKED, key.organization_id, key_event_data(str(key.id), key.key_id), now)


class IdentityService:
    def __init__(self, tx: Transactions, pepper: bytes, now: Callable[[], datetime], forget_key: Callable[[str], None]):
        self._tx = tx
        self._pepper = pepper
        self._now = now
        self._forget_key = forget_key  # drops this process's cached lookup at once

    def create_organization(self, name: str) -> Organization:
        if not name.strip():
            raise ValidationFailed("name: must not be empty")
        with self._tx() as session:
            org = Organization(name=name.strip())
            session.add(org)
            session.flush()
            return org

    def list_organizations(self) -> list[Organization]:
        with self._tx.read() as session:
            return list(session.scalars(select(Organization).order_by(Organization.id)))

    def create_user(self, organization_id: UUID, email: str, name: str, role: Role | str) -> User:
        role_value = parse_role(role)
        with self._tx() as session:
            if session.get(Organization, organization_id) is None:
                raise not_found("Organization")
            exists = session.scalar(select(User.id).where(User.organization_id == organization_id, User.email == email))
            if exists:
                raise Conflict(f"A user with email {email} already exists in this organization.")
            user = User(organization_id=organization_id, email=email, name=name, role=role_value.value)
            session.add(user)
            session.flush()
            return user

    def list_users(self, organization_id: UUID) -> list[User]:
        with self._tx.read() as session:
            _require_organization(session, organization_id)
            return list(session.scalars(select(User).where(User.organization_id == organization_id).order_by(User.id)))

    def issue_key(self, organization_id: UUID, user_id: UUID, role: Role | str, name: str) -> IssuedKey:
        role_value = parse_role(role)
        with self._tx() as session:
            user = session.get(User, user_id)
            if user is None or user.organization_id != organization_id:
                raise not_found("User")
            key, full_key = add_key(session, self._pepper, user, role_value, name)
            return IssuedKey(key.id, name, role_value, user_id, f"dps_{key.key_id}", full_key)

    def rotate_key(self, key_row_id: UUID) -> IssuedKey:
        """A new key id and secret on the same key; the old value stops working."""
        with self._tx() as session:
            key = session.get(ApiKey, key_row_id, with_for_update=True)
            if key is None or key.status != KeyStatus.ACTIVE:
                raise not_found("Active API key")
            old_key_id, full_key = rotate_locked_key(session, self._pepper, key, self._now())
            issued = IssuedKey(key.id, key.name, Role(key.role), key.user_id, f"dps_{key.key_id}", full_key)
        self._forget_key(old_key_id)
        return issued

    def revoke_key(self, key_row_id: UUID) -> ApiKey:
        with self._tx() as session:
            key = session.get(ApiKey, key_row_id, with_for_update=True)
            if key is None:
                raise not_found("API key")
            revoke_locked_key(session, key, self._now())
        self._forget_key(key.key_id)
        return key

    def set_api_key_access(self, user_id: UUID, granted: bool) -> User:
        """Grant or withdraw a person's API-key access (the seed; the console's team page goes
        through ``dps_api.services.people``, which shares ``change_api_key_access``)."""
        with self._tx() as session:
            user = session.get(User, user_id, with_for_update=True)
            if user is None:
                raise not_found("User")
            ended = change_api_key_access(session, user, granted, self._now())
        for key_id in ended:
            self._forget_key(key_id)
        return user

    def key_with_prefix(self, key_id: str) -> UUID:
        """The id of the key whose prefix is ``dps_<key_id>`` (a rotated key has a new prefix: the old
        one names nothing)."""
        with self._tx.read() as session:
            found = session.scalar(select(ApiKey.id).where(ApiKey.key_id == key_id))
        if found is None:
            raise not_found(f"API key with prefix {PREFIX}_{key_id}")
        return found

    def list_keys(self, organization_id: UUID) -> list[ApiKey]:
        with self._tx.read() as session:
            _require_organization(session, organization_id)
            return list(session.scalars(select(ApiKey).where(ApiKey.organization_id == organization_id).order_by(ApiKey.id)))


def _require_organization(session: Session, organization_id: UUID) -> None:
    if session.get(Organization, organization_id) is None:
        raise not_found("Organization")


def change_api_key_access(session: Session, user: User, granted: bool, now: datetime) -> list[str]:
    """Set a person's API-key access (their row locked by the caller). A change ends their live
    console credentials (key events: every service drops the cached principal, whose access it
    carries; they sign in again). Their integration keys stay as they are. Answers the key ids
    ended, for the caller to forget once committed."""
    if user.api_key_access == granted:
        return []
    user.api_key_access = granted
    live = session.scalars(
        select(ApiKey)
        .where(ApiKey.user_id == user.id, ApiKey.kind == KeyKind.CONSOLE, ApiKey.status == KeyStatus.ACTIVE)
        .order_by(ApiKey.id)
        .with_for_update()
    ).all()
    for key in live:
        revoke_locked_key(session, key, now)
    return [key.key_id for key in live]
