# syntax=docker/dockerfile:1
# The billing platform stand-in (a test double of Stripe), for docker-compose.yml only: never deploy
# it. Build from the repository root:
#   docker build -f deploy/compose/billing-stand-in.Dockerfile -t dps-billing-stand-in:dev .

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY constraints.txt ./
COPY tests/stand-ins/billing-platform tests/stand-ins/billing-platform
RUN pip install -c constraints.txt ./tests/stand-ins/billing-platform

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN groupadd --system --gid 10001 dps \
    && useradd --system --uid 10001 --gid dps --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin dps
COPY --from=build /opt/venv /opt/venv
USER 10001:10001
WORKDIR /tmp
EXPOSE 8090
CMD ["dps-billing-stand-in", "--host", "0.0.0.0", "--port", "8090"]
