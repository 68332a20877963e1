"""The console's own database: sign-in links, sessions and the sign-in request counters."""
