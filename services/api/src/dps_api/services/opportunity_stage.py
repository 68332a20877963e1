"""The opportunity stage vocabulary, in a module of its own so schemas and services share it
without importing each other."""

from __future__ import annotations

from enum import StrEnum


class OpportunityStage(StrEnum):
    PROSPECTING = "PROSPECTING"
    QUALIFICATION = "QUALIFICATION"
    PROPOSAL = "PROPOSAL"
    NEGOTIATION = "NEGOTIATION"
    CLOSED_WON = "CLOSED_WON"  # set only by the closed-won action
    CLOSED_LOST = "CLOSED_LOST"
