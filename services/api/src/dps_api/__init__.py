"""The api service: identity, catalog, opportunities, deal groups, pricing quotes and approvals."""

SERVICE = "api"  # in every log line (``service``) and in metrics' ``service`` label
