"""An approval request as the approvals use cases return it: its identity and its flow, no rows, no JSON.

``dps_api.schemas.approvals.render_approval`` turns it into the API's JSON (also its events' data).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from dps_api.domain.approval_flow import Flow


@dataclass(frozen=True, slots=True)
class ApprovalRequestView:
    id: UUID
    quote_id: UUID
    requested_by_user_id: UUID
    flow: Flow  # its owner_user_id is the quote's owner when the quote was submitted
    created_at: datetime
    updated_at: datetime
