"""The HTTP server's edge: what gunicorn does before and around the app (``dps_common.gunicorn_conf``).

- ``worker``: the gunicorn worker every service runs (gevent, with read deadlines, problem+json for
  the errors the server writes itself, ``Connection: close`` honoured); imports gevent, so only
  gunicorn loads it.
- ``reading``: the read deadlines on a client socket.
- ``problems``: the raw HTTP responses the server writes without the app.
- ``metrics``: prometheus-client's multiprocess mode for the several workers of one server.

Nothing is imported here: the app imports ``metrics`` without pulling gevent in.
"""
