"""Importers from the memory tools people use today: Claude Code auto memory, memsearch, Hermes."""
