"""Request budgets shared by every process and replica (Redis through the ``limits`` library).

``settings`` reads the configuration, ``counters`` talks to the store, ``budget`` turns a count into
a decision (and fails open when the store is down). The HTTP side is ``dps_common.http.rate_limit``.
"""
