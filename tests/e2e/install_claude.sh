#!/usr/bin/env bash
# Install the pinned Claude Code CLI used by the end-to-end tests (tests/e2e/package.json) into
# the test cache and print the path of its binary: `install_cli.sh claude` (exit codes there).
exec bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/install_cli.sh" claude
