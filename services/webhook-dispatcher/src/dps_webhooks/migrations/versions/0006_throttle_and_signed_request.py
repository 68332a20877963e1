"""an endpoint may declare how many requests a second it takes (``rateLimitPerSecond``, shared by every
delivery worker), and each attempt keeps the ``webhook-timestamp`` and ``webhook-signature`` it was
sent with, so the portal shows the request exactly as sent (a later secret rotation changes nothing)

Revision ID: 0006_throttle_and_signed_request
Revises: 0005_history_partitioned_by_day
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_throttle_and_signed_request"
down_revision = "0005_history_partitioned_by_day"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("webhook_endpoints", sa.Column("rate_limit_per_second", sa.Integer()))
    op.create_check_constraint(
        op.f("ck_webhook_endpoints_rate_limit_per_second"),
        "webhook_endpoints",
        "rate_limit_per_second IS NULL OR rate_limit_per_second BETWEEN 1 AND 1000",
    )
    # On the partitioned parent: every day's partition gets them too.
    op.add_column("webhook_delivery_attempts", sa.Column("webhook_timestamp", sa.BigInteger()))
    op.add_column("webhook_delivery_attempts", sa.Column("webhook_signature", sa.Text()))


def downgrade() -> None:
    op.drop_column("webhook_delivery_attempts", "webhook_signature")
    op.drop_column("webhook_delivery_attempts", "webhook_timestamp")
    op.drop_constraint(op.f("ck_webhook_endpoints_rate_limit_per_second"), "webhook_endpoints")
    op.drop_column("webhook_endpoints", "rate_limit_per_second")
