"""Events, as every service publishes and consumes them: the envelope (``envelope``), the message
headers beside it (``headers``: the request id), and the catalogue of the event types a service
publishes with the schema of their ``data`` (``catalogue``). How they travel is elsewhere: written in
the transaction of their change (``dps_common.outbox``), carried by the broker (``dps_common.messaging``),
documented as webhooks (``dps_common.openapi.events``)."""
