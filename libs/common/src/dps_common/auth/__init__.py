"""API key contracts: roles, scopes, the principal a key resolves to, key format and hashing, the cache."""
