"""The console's clients of other systems: the three services' HTTP APIs, the api's internal console
operations, SMTP."""
