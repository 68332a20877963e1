"""The worker process's loops, one module each (deliveries, consumers, retention), put together by
``composition.build_worker``; none imports another."""
