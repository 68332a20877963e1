"""``make run`` (``dealpricing-dev``): the whole system on one machine from a fresh clone, for
development. Not part of any service: it starts the api, the webhook dispatcher, the billing
connector (each with its workers and outbox relay), the settings console, the billing platform
stand-in and a development mailbox (SMTP sink) by their commands, on an embedded PostgreSQL and kombu's file-system broker unless DATABASE_URL / AMQP_URL name
real ones. It imports only the api's migrations and demo seed."""
