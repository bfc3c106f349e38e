"""Skill drafts: recurring procedures counted from transcripts, a structural gate, promotion."""
