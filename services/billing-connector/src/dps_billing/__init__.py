"""The billing connector: the billing platform connection and the push of approved quotes."""

SERVICE = "billing-connector"  # in every log line (``service``) and in metrics' ``service`` label
