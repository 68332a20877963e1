"""gunicorn settings shared by every service: ``gunicorn -c python:dps_common.gunicorn_conf 'dps_api.wsgi:create()'``.

Worker model: ``gthread``. A request spends most of its time waiting on PostgreSQL, so a few threads
per process serve concurrent requests for a fraction of the memory of more ``sync`` processes, and
keep-alive from the ingress is honoured (``sync`` closes every connection and assumes a buffering
proxy in front). The app is thread-safe: a session per use case, a locked key cache, a pooled engine
sized at least as large as the thread count (DB_POOL_SIZE, default 5).
"""

import os

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8080')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = 30
graceful_timeout = 20  # below Kubernetes' 30 s termination grace period
keepalive = 5

# Access logs off: the app writes one JSON line per request itself. gunicorn's own messages go
# through the same JSON formatter, so every line on stdout is one JSON object.
accesslog = None
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "root": {"level": os.environ.get("LOG_LEVEL", "INFO").upper(), "handlers": ["json"]},
    "loggers": {
        "gunicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
        "gunicorn.access": {"level": "WARNING", "handlers": [], "propagate": False},
    },
    "handlers": {"json": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"}},
    "formatters": {
        "json": {"()": "dps_common.logs.JsonLineFormatter"},  # the apps' own lines' fields, time in UTC
    },
}

# Behind the ingress: trust its X-Forwarded-* headers (the pod is reachable only through it).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# Heartbeat files in memory, not on a container's overlay filesystem (gunicorn's Docker advice).
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"
# No runtime control socket: nothing uses gunicornc, and it would write under $HOME (read-only in
# the container) and clash between two servers started by the same user.
control_socket_disable = True
