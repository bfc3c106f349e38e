"""Gemini CLI: its hook command (`entry`) and events (`handlers`), `memrepo install gemini` (`install`), its transcript's last turn (`tail`)."""
