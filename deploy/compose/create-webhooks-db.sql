-- the webhook dispatcher's own database (docker-compose.yml mounts this into postgres' init folder)
CREATE DATABASE dps_webhooks;
