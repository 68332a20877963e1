"""Falcon plumbing shared by the services: operations, auth, paging, errors, bodies, health, the
OpenAPI document's publication (it is built in ``dps_common.openapi``); and ``process_server``,
health and metrics for the processes that serve no other HTTP."""
