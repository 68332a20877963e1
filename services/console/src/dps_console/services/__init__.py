"""The console's use cases: signing in, sessions, the sign-in mail queue, the forms' results, the
event catalogue, purging old rows; and the ports (``ports``) the adapters fill."""
