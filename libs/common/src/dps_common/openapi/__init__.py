"""The OpenAPI 3.1 documents: each service's own (``document``, built from its ``Operation``
declarations, with its shared ``components``, ``intro``, replayed ``secrets`` and the ``events`` it
publishes as webhooks), the examples its models declare (``examples``), and the external API's one
document merged from them (``merge``, fetched and refreshed by ``parts``). Served by
``dps_common.http.app.publish_openapi``."""
