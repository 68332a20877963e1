"""The connector's pure logic: from a quote snapshot to what the billing platform is asked to create.

No framework and no I/O here: plain functions over plain values (``plan_push`` is the entry point).
"""
