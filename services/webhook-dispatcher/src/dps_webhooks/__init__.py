"""The webhook dispatcher: endpoints, events received from the api, signed deliveries and retries."""

SERVICE = "webhook-dispatcher"  # in every log line (``service``) and in metrics' ``service`` label
