"""Delivering webhooks: claiming due deliveries, one signed attempt each, recording the outcome."""
