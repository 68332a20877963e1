"""The console's use cases: signing in, sessions, the mail, and the calls to the three services."""
