"""forget the kept answers of POST /billing-connection/authorize: until now an answer kept for an
Idempotency-Key held the start URL, whose ticket is a secret (now it is kept as null, shown once).
The rows are deleted rather than redacted: a retry of such a request runs it again, as after 24 hours.

Revision ID: 0007_forget_kept_start_urls
Revises: 0006_push_request_id
"""

from alembic import op

revision = "0007_forget_kept_start_urls"
down_revision = "0006_push_request_id"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "DELETE FROM idempotency_keys "
        "WHERE request_path LIKE '%/billing-connection/authorize' OR request_path LIKE '%/billing-connection/authorize?%'"
    )


def downgrade() -> None:
    pass  # nothing to restore: the tickets are gone for good
