"""The console's rules, free of any framework: tokens, CSRF, session lifetimes, who sees what,
a service's problem details turned into field messages."""
