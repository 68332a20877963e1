"""the outbox wakes its relays: a statement trigger notifies at commit

Revision ID: 0006_outbox_notify
Revises: 0005_approvals
"""

from alembic import op

from dps_common.outbox.migration import create_notify_trigger, drop_notify_trigger

revision = "0006_outbox_notify"
down_revision = "0005_approvals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The shared outbox's trigger (the SQL this migration has always run): it notifies the channel
    # the relays LISTEN on (dps_common.outbox.OUTBOX_CHANNEL) once per inserting statement, at commit.
    create_notify_trigger(op)


def downgrade() -> None:
    drop_notify_trigger(op)
