"""Codex CLI: its hook events (`entry`), `memrepo install codex` (`install`, `trust`), its rollout's last turn (`tail`)."""
