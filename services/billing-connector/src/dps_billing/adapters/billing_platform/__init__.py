"""The billing platform client: products, prices and draft quotes through the official ``stripe``
package, with what it lacks added on top (retries with backoff that honour ``Stripe-Should-Retry``
and ``Retry-After``, pacing per account, typed errors), and the Stripe Apps OAuth calls."""
