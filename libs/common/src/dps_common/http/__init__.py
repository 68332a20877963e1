"""Falcon plumbing shared by the services: operations, auth, paging, errors, bodies, OpenAPI, health."""
