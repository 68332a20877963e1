"""The api service: identity, catalog, opportunities, deal groups, pricing quotes and approvals."""
