"""``make run``: the whole system on one machine from a fresh clone (the api, its outbox relay, the
webhook dispatcher's HTTP side and worker), on an embedded PostgreSQL and a file-system broker unless
DATABASE_URL / AMQP_URL name real ones. The other services are started by their commands, never
imported: the api knows their command names only."""
