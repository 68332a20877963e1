"""Falcon resources of ``/webhook-configs/**``: parse, call one service function, shape the answer."""
