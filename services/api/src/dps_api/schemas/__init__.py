"""Request and response models: request bodies are parsed with them, and all appear in OpenAPI.

Money and quantities travel as decimal strings (``"1234.50"``) so no float ever touches them.
"""
