"""The settings console's team page: an admin sees the organization's people and grants or
withdraws their API-key access (``dps_api.services.identity.change_api_key_access``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from uuid import UUID

from sqlalchemy import select

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.db import Transactions
from dps_common.errors import Conflict, Forbidden, not_found
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.models.identity import User
from dps_api.domain.key_access import PersonView
from dps_api.services.identity import change_api_key_access


def person_view(user: User) -> PersonView:
    return PersonView(user.id, user.email, user.name, Role(user.role), user.api_key_access)


def require_admin(principal: Principal, action: str) -> None:
    if principal.role is not Role.ADMIN:
        raise Forbidden(f"Only an admin may {action}.", code="forbidden")


class PeopleService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], forget_key: Callable[[str], None]):
        self._tx = tx
        self._now = now
        self._forget_key = forget_key

    def list_people(self, principal: Principal, page: PageRequest) -> list[PersonView]:
        """``limit + 1`` people of the organization after the page's position, by id."""
        require_admin(principal, "see the team")
        with self._tx.read() as session:
            stmt = select(User).where(User.organization_id == principal.organization_id)
            return [person_view(u) for u in session.scalars(keyset(stmt, [User.id], page, convert=[UUID]))]

    def set_api_key_access(self, principal: Principal, user_id: UUID, granted: bool) -> PersonView:
        """A change ends the person's console sessions' credentials (they sign in again); their
        integration keys stay as they are. A view-only person is never granted access (409)."""
        require_admin(principal, "grant or withdraw API-key access")
        with self._tx() as session:
            user = session.scalar(
                select(User)
                .where(User.id == user_id, User.organization_id == principal.organization_id)
                .with_for_update()
            )
            if user is None:
                raise not_found("Person")
            if granted and Role(user.role) is Role.VIEW_ONLY:  # design: view only has no API-key rights
                raise Conflict("A view-only person cannot be granted API-key access: change their role first.",
                               code="view_only_no_key_access")
            ended = change_api_key_access(session, user, granted, self._now())
            view = person_view(user)
        for key_id in ended:
            self._forget_key(key_id)
        return view
