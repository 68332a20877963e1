"""HTTP edges, one module per resource. Each parses, calls one use case, shapes the response."""
