#!/usr/bin/env bash
# Install the pinned Claude Code CLI used by the end-to-end tests into a cache
# directory outside the repository, and print the path of its binary.
#
#   ${MEMREPO_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memrepo-tests}/claude-code-<version>/
#
# Idempotent: when the cache already holds the pinned version installed from the
# same package.json/package-lock.json, it only prints the path.
#
# Exit codes (stdout carries only the binary path, diagnostics go to stderr):
#   0  installed (or already installed); the path is printed
#   2  npm (or node) is not available
#   3  npm could not reach its registry (offline machine)
#   1  any other failure
set -euo pipefail

VERSION=2.1.332
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${MEMREPO_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memrepo-tests}
DEST=$CACHE_ROOT/claude-code-$VERSION
BIN=$DEST/node_modules/.bin/claude

die() {
    local code=$1
    shift
    echo "install_claude.sh: $*" >&2
    exit "$code"
}

installed_ok() {
    [ -x "$BIN" ] || return 1
    cmp -s "$HERE/package.json" "$DEST/package.json" || return 1
    cmp -s "$HERE/package-lock.json" "$DEST/package-lock.json" || return 1
    local out
    out=$(timeout 60 "$BIN" --version 2>/dev/null </dev/null) || return 1
    case "$out" in
        "$VERSION "* | "$VERSION") return 0 ;;
        *) return 1 ;;
    esac
}

if installed_ok; then
    echo "$BIN"
    exit 0
fi

command -v npm >/dev/null 2>&1 || die 2 "npm not found on PATH; cannot install @anthropic-ai/claude-code@$VERSION"
command -v node >/dev/null 2>&1 || die 2 "node not found on PATH; cannot install @anthropic-ai/claude-code@$VERSION"

mkdir -p "$CACHE_ROOT"
# One installer at a time (e.g. two test runs starting together); the second one finds the
# first one's result.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_ROOT/.install.lock"
    flock -w 900 9 || die 1 "timed out waiting for another install_claude.sh ($CACHE_ROOT/.install.lock)"
    if installed_ok; then
        echo "$BIN"
        exit 0
    fi
fi
STAGE=$(mktemp -d "$CACHE_ROOT/.claude-code-$VERSION.stage.XXXXXX")
chmod 755 "$STAGE"
LOG=$STAGE.npm.log
cleanup() { rm -rf "$STAGE" "$LOG"; }
trap cleanup EXIT

cp "$HERE/package.json" "$HERE/package-lock.json" "$STAGE/"
echo "install_claude.sh: installing @anthropic-ai/claude-code@$VERSION into $DEST" >&2

# npm 11 warns that the package's postinstall script is not in allowScripts; the
# native binary comes from the platform optional dependency either way, and the
# version check below is what decides success.
set +e
(cd "$STAGE" && timeout 900 npm ci --no-audit --no-fund --loglevel=error) >"$LOG" 2>&1
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
    if grep -Eq 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network' "$LOG"; then
        die 3 "npm ci could not reach the registry (offline?): $(grep -m1 -E 'ERR|err' "$LOG" || true)"
    fi
    tail -n 20 "$LOG" >&2
    die 1 "npm ci failed with exit code $rc"
fi

STAGE_BIN=$STAGE/node_modules/.bin/claude
[ -x "$STAGE_BIN" ] || die 1 "npm ci finished but $STAGE_BIN is missing"
out=$(timeout 60 "$STAGE_BIN" --version 2>&1 </dev/null) || die 1 "installed binary does not run: $out"
case "$out" in
    "$VERSION "* | "$VERSION") ;;
    *) die 1 "installed binary reports version '$out', expected $VERSION" ;;
esac

# The .bin symlink is relative, so the staged tree can be moved into place whole.
rm -rf "$DEST"
mv "$STAGE" "$DEST"
installed_ok || die 1 "installed into $DEST but the check after moving it failed"
echo "$BIN"
