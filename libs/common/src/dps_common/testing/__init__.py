"""Test helpers shared by the services' suites: finding real PostgreSQL and RabbitMQ servers."""
