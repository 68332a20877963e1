#!/bin/sh
# docker-compose.yml's PostgreSQL, first start only (docker-entrypoint-initdb.d): a role and a database
# per service, each database owned by its service's role and closed to every other role, so a service
# can reach only its own data (as in production, where each has its own database and credentials).
# The passwords come from the environment (.env, made by `make compose-env`); none has a default.
set -eu
create() {  # create <role and database> <password>
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
       --set=name="$1" --set=password="$2" <<'SQL'
CREATE ROLE :"name" LOGIN PASSWORD :'password';
CREATE DATABASE :"name" OWNER :"name";
REVOKE ALL ON DATABASE :"name" FROM PUBLIC;
SQL
}
create dps_api "${API_DB_PASSWORD:?}"
create dps_webhooks "${WEBHOOKS_DB_PASSWORD:?}"
create dps_billing "${BILLING_DB_PASSWORD:?}"
create dps_console "${CONSOLE_DB_PASSWORD:?}"
