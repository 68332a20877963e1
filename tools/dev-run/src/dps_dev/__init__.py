"""``make run`` (``dealpricing-dev``): the whole system on one machine from a fresh clone, for
development. Not part of any service: it starts the api, the webhook dispatcher, the billing
connector (each with its workers and outbox relay), the settings console, the billing platform
stand-in and a development mailbox (SMTP sink) by their commands, on an embedded PostgreSQL, kombu's
file-system broker and an embedded Redis (the rate limits) unless DATABASE_URL / AMQP_URL / REDIS_URL
name real ones; a process that exits is started again. It imports only the api's migrations and demo seed."""
