"""Gemini CLI: its hook events (`entry`), `memrepo install gemini` (`install`), its transcript's last turn (`tail`)."""
