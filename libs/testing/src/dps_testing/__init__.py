"""Test helpers shared by the services' suites, and their pytest plugin (``plugin``): real PostgreSQL
and RabbitMQ servers, a migrated database per run and a rolled-back transaction per test, the
migration checks, server processes and a webhook receiver."""
