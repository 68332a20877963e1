"""Size limits of the api's resources: business rules the use cases enforce and the request models
document (and check early, where a request body can break them alone)."""

from __future__ import annotations

from typing import Final

# Lines of one quote.
MAX_LINES: Final = 500
# Bounds that keep ``GET /deal-groups?opportunityId=`` a bounded lookup without paging.
MAX_OPPORTUNITIES_PER_GROUP: Final = 1000
MAX_GROUPS_PER_OPPORTUNITY: Final = 100
