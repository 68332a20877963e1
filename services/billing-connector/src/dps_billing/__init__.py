"""The billing connector: the billing platform connection and the push of approved quotes."""
