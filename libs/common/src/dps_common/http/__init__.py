"""Falcon plumbing shared by the services: operations, auth, paging, errors, bodies, OpenAPI, health;
and ``process_server``, health and metrics for the processes that serve no other HTTP."""
