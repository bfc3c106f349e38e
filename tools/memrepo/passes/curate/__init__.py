"""The curator: deterministic tidying, candidate pairs, the four guards, review branches."""
