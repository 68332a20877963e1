# syntax=docker/dockerfile:1
# Every service's image, one template. Build from the repository root (it installs libs/common too),
# naming the service's folder under services/ and its package:
#   docker build -f deploy/service.Dockerfile --build-arg SERVICE=api --build-arg PACKAGE=dps_api -t dps-api:0.1.0 .
#   (webhook-dispatcher/dps_webhooks, billing-connector/dps_billing, console/dps_console; docker-compose.yml has all four)
# deploy/service.Dockerfile.dockerignore keeps the context to what the images need.
# The same image runs the service's migration and its other processes (its CLIs; deploy/README.md).

FROM python:3.11-slim AS build
# an ARG is scoped to its stage: declared again in the stage that uses it
ARG SERVICE
ARG PACKAGE
RUN test -n "$SERVICE" && test -n "$PACKAGE" || { echo "--build-arg SERVICE=<folder> and PACKAGE=<package> are required" >&2; exit 1; }
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY constraints.txt ./
COPY libs/common libs/common
COPY services/${SERVICE} services/${SERVICE}
# every dependency pinned by constraints.txt; psycopg's binary wheel brings its own libpq
RUN pip install -c constraints.txt ./libs/common ./services/${SERVICE}

FROM python:3.11-slim
ARG PACKAGE
# gunicorn's wsgi_app (dps_common.gunicorn_conf reads it): the CMD names no app, so it stays exec-form
# and gunicorn is PID 1, receiving the signals
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PORT=8080 \
    DPS_WSGI_APP="${PACKAGE}.wsgi:create()"
RUN groupadd --system --gid 10001 dps \
    && useradd --system --uid 10001 --gid dps --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin dps
COPY --from=build /opt/venv /opt/venv
# non-root, and nothing written outside /tmp (mount a tmpfs/emptyDir there: the root stays read-only)
USER 10001:10001
WORKDIR /tmp
EXPOSE 8080
CMD ["gunicorn", "-c", "python:dps_common.gunicorn_conf"]
