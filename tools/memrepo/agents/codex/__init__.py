"""Codex CLI: its hook command (`entry`) and events (`handlers`), `memrepo install codex` (`install`, `trust`), its rollout's last turn (`tail`)."""
