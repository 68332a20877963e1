"""the outbox wakes its relays: a statement trigger notifies at commit

Revision ID: 0006_outbox_notify
Revises: 0005_approvals
"""

from alembic import op

revision = "0006_outbox_notify"
down_revision = "0005_approvals"
branch_labels = None
depends_on = None

# The relay LISTENs on dps_api.services.outbox.OUTBOX_CHANNEL; written out here because a migration must
# not change when app code does (test_outbox_relay checks the two agree).
CHANNEL = "outbox_events"


def upgrade() -> None:
    # Per statement, not per row: one notification per insert is enough, and PostgreSQL folds repeats
    # within a transaction anyway. NOTIFY is transactional: delivered at commit, never for a rollback.
    op.execute(
        f"""
        CREATE FUNCTION notify_outbox_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{CHANNEL}', '');
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events "
        "FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox_events()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER outbox_events_notify ON outbox_events")
    op.execute("DROP FUNCTION notify_outbox_events()")
