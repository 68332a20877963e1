"""The webhook dispatcher: endpoints, events received from the api, signed deliveries and retries."""
