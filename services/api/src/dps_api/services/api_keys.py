"""The settings console's API keys: list, issue, rotate and revoke an organization's integration keys,
as the signed-in person (``dps_api.domain.key_access`` says who may do what).

The keys are made, rotated and revoked by the same functions as the admin command line's
(``dps_api.services.identity``), so the same key events reach every service: a rotated or revoked
key stops working everywhere at once. Console credentials are never listed nor touched here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, cast
from uuid import UUID

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.db import Transactions
from dps_common.errors import Conflict, Forbidden, invalid_field, not_found
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.models.identity import ApiKey, KeyKind, KeyStatus, User
from dps_api.domain.api_key_commands import NewApiKey, role_too_high
from dps_api.domain.key_access import ApiKeyView, IssuedApiKey, role_within
from dps_api.services.identity import add_key, revoke_locked_key, rotate_locked_key


def is_admin(principal: Principal) -> bool:
    return principal.role is Role.ADMIN


def _view(key: ApiKey, user_name: str) -> ApiKeyView:
    return ApiKeyView(
        key.id, key.name, Role(key.role), key.user_id, user_name, key.key_id, key.status,
        key.created_at, key.last_used_at, key.rotated_at, key.revoked_at,
    )


def _visible(principal: Principal) -> Select[ApiKey, str]:
    """The integration keys the caller may see: the organization's (admin), else their own."""
    stmt = (
        select(ApiKey, User.name)
        .join(User, User.id == ApiKey.user_id)
        .where(ApiKey.organization_id == principal.organization_id, ApiKey.kind == KeyKind.INTEGRATION)
    )
    return stmt if is_admin(principal) else stmt.where(ApiKey.user_id == principal.user_id)


class ApiKeyService:
    def __init__(
        self, tx: Transactions, pepper: bytes, now: Callable[[], datetime], forget_key: Callable[[str], None]
    ):
        self._tx = tx
        self._pepper = pepper
        self._now = now
        self._forget_key = forget_key  # drops this process's cached lookup at once

    def list_keys(self, principal: Principal, page: PageRequest) -> list[ApiKeyView]:
        """``limit + 1`` keys after the page's position, by id (creation order); revoked ones too."""
        with self._tx.read() as session:
            stmt = cast("Select[Any]", _visible(principal))  # keyset's bound is written for one column
            rows = session.execute(keyset(stmt, [ApiKey.id], page, convert=[UUID])).all()
            return [_view(key, user_name) for key, user_name in rows]

    def issue(self, principal: Principal, command: NewApiKey) -> IssuedApiKey:
        user_id = command.user_id or principal.user_id
        if user_id != principal.user_id and not is_admin(principal):
            raise Forbidden(
                "Only an admin may issue a key acting as another user.",
                code="forbidden",
                extra={"errors": [{"field": "userId", "message": "must be your own user id (or left out)"}]},
            )
        if not role_within(command.role, principal.role):
            raise role_too_high(command.role, principal.role, "issue")
        with self._tx() as session:
            user = session.get(User, user_id)
            if user is None or user.organization_id != principal.organization_id:
                raise invalid_field("userId", "is not a user of this organization")
            key, full_key = add_key(session, self._pepper, user, command.role, command.name)
            return IssuedApiKey(_view(key, user.name), full_key)

    def rotate(self, principal: Principal, key_row_id: UUID) -> IssuedApiKey:
        """A new key id and secret; the old value stops working at once, everywhere."""
        with self._tx() as session:
            key, user_name = self._locked(session, principal, key_row_id)
            if key.status != KeyStatus.ACTIVE:
                raise Conflict("A revoked API key cannot be rotated; issue a new one.", code="api_key_revoked")
            if not role_within(Role(key.role), principal.role):
                raise role_too_high(Role(key.role), principal.role, "rotate")
            old_key_id, full_key = rotate_locked_key(session, self._pepper, key, self._now())
            issued = IssuedApiKey(_view(key, user_name), full_key)
        self._forget_key(old_key_id)
        return issued

    def revoke(self, principal: Principal, key_row_id: UUID) -> ApiKeyView:
        """Revoked at once, everywhere; revoking a revoked key changes nothing."""
        with self._tx() as session:
            key, user_name = self._locked(session, principal, key_row_id)
            revoke_locked_key(session, key, self._now())
            view = _view(key, user_name)
        self._forget_key(view.key_id)
        return view

    @staticmethod
    def _locked(session: Session, principal: Principal, key_row_id: UUID) -> tuple[ApiKey, str]:
        """A key the caller may act on, locked; any other id (another person's key, a console
        credential, another organization's) is not found."""
        row = session.execute(
            _visible(principal).where(ApiKey.id == key_row_id).with_for_update(of=ApiKey)
        ).one_or_none()
        if row is None:
            raise not_found("API key")
        return row[0], row[1]
