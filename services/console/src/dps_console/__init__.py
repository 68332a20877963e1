"""The settings console: server-rendered pages for the people of an organization."""

SERVICE = "console"  # in every log line (``service``) and in metrics' ``service`` label
