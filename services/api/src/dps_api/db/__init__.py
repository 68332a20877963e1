"""The api's tables (typed SQLAlchemy 2). Schema changes go through Alembic only."""
