"""Contracts between the services: the vocabulary and shapes one service publishes and another reads.
Values and their wire form only; no behaviour and no domain rules."""
