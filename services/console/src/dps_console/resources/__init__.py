"""The console's pages, one module per section; ``web`` holds what they share."""
