"""The console's processes that serve no HTTP, their loops only (put together by ``composition``)."""
