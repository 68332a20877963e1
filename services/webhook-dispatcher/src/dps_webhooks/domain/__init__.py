"""Delivery rules as plain functions over plain values: address classification, backoff, outcomes."""
