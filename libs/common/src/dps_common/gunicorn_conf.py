"""gunicorn settings shared by every service: ``gunicorn -c python:dps_common.gunicorn_conf 'dps_api.wsgi:create()'``.

The app is the command line's argument or, without one, ``DPS_WSGI_APP`` (gunicorn's ``wsgi_app``): the
images (deploy/service.Dockerfile) set it, so their CMD names no app and stays exec-form.

Worker model: gevent (``dps_common.edge.worker.EdgeWorker``), so that slow clients cannot starve the
service. With ``gthread`` a connection held a thread from its first byte until its request was
complete: 20 connections sending a header line every 5 s took all 8 threads of a server and nobody
else was answered, and a body that stopped after one byte held a thread for 40 s. A buffering proxy
only protects what is behind it (``make run`` and the tests talk to gunicorn directly), and read
deadlines alone still let a few hundred slow connections queue ahead of everyone. Under gevent a
waiting connection is a parked greenlet of a few KB (``worker_connections`` per worker), and the
worker adds the deadlines: the head within 5 s of its first byte (else 408), a body with at most 5 s
between reads and 60 s in all, idle connections closed (``dps_common.edge.reading``).

What the app relies on under gevent's monkey-patching, checked: psycopg 3 (3.1.14 and later) sees the
patched ``select`` and waits through it instead of its C wait, so a query parks its greenlet, not the
worker; SQLAlchemy's pool, the key cache and prometheus-client lock with ``threading`` locks, which
become gevent's; requests (the dispatcher's and the connector's calls to the api and the platform)
and kombu use the patched sockets. Thread-local state would be per connection: the read connections
of ``dps_common.db.Transactions`` come from the engine's pool for that reason. DATABASE_POOL_SIZE
(default 5, kept between uses) and DATABASE_MAX_OVERFLOW (5 more while busy) bound each worker's
concurrent queries; requests beyond them wait for a connection.

Keep-alive from the ingress is honoured, and a response the app marks ``Connection: close`` closes it.
Metrics add up every worker's (prometheus-client multiprocess mode, ``dps_common.edge.metrics``).
"""

import os
import re
import sys

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8080')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# the app when the command line names none (an argument wins: a Kubernetes command may name it)
wsgi_app = os.environ.get("DPS_WSGI_APP") or None
worker_class = "dps_common.edge.worker.EdgeWorker"
# connections each worker serves at once (open keep-alive ones included); more wait in the backlog
worker_connections = int(os.environ.get("WORKER_CONNECTIONS", "1000"))
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



def _identify_master() -> None:
    """The master's own lines (started, workers booted and exited) name the service like its
    workers' do: the service package of the app on the command line (``dps_api.wsgi:create()``), else
    of ``DPS_WSGI_APP``, says which (its ``SERVICE``; the package's ``__init__`` only, which imports nothing)."""
    import importlib

    from dps_common import logs

    for arg in [*sys.argv[1:], wsgi_app or ""]:
        found = re.match(r"^(\w+)\.wsgi:", arg)
        if found:
            service = getattr(importlib.import_module(found.group(1)), "SERVICE", None)
            if isinstance(service, str):
                logs.identify(service, "http")
            return


_identify_master()

# Behind the ingress: trust its X-Forwarded-* headers (the pod is reachable only through it).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# Heartbeat files in memory, not on a container's overlay filesystem (gunicorn's Docker advice).
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"
# No runtime control socket: nothing uses gunicornc, and it would write under $HOME (read-only in
# the container) and clash between two servers started by the same user.
control_socket_disable = True


# prometheus-client multiprocess mode: one metrics directory per server, emptied at start, before any
# worker is forked (dps_common.edge.metrics). Hooks run in the master.
def on_starting(server: object) -> None:
    from dps_common.edge import metrics

    metrics.prepare()


def child_exit(server: object, worker: object) -> None:
    from dps_common.edge import metrics

    metrics.worker_exited(getattr(worker, "pid"))


def worker_int(worker: object) -> None:
    """A worker's SIGINT or SIGQUIT (Ctrl-C reaches every process of the terminal's group, and the
    master passes SIGQUIT on): gunicorn's gevent worker ends it with ``sys.exit`` in a greenlet of its
    own 0.1 s later, often once the main greenlet has left its loop (``alive`` is already False) and
    is running the interpreter's exit, where gevent prints that ``SystemExit`` as a traceback and cuts
    the atexit hooks short (a subscriber's unbinding). Ending that greenlet here leaves the exit to
    the main greenlet, which stops as on SIGTERM: no traceback, every hook run."""
    import gevent

    if gevent.getcurrent().parent is not None:  # in the greenlet gunicorn spawned (never the main one)
        raise gevent.GreenletExit


def on_exit(server: object) -> None:
    from dps_common.edge import metrics

    metrics.finish()
