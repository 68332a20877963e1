"""The settings console: server-rendered pages for the people of an organization."""
