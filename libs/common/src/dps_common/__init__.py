"""Plumbing and contracts shared by every Deal Pricing Service service. No domain model lives here."""
