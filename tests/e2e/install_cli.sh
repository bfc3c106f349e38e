#!/usr/bin/env bash
# Install one pinned agent CLI used by the end-to-end tests into a cache directory outside the
# repository, and print the path of its binary:
#
#   install_cli.sh claude|codex|gemini
#   ${MEMREPO_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memrepo-tests}/<name>-<version>/
#
# Under pytest, MEMREPO_TEST_CACHE is always set: tests/conftest.py resolves it by the same rule from
# the real environment at session start, before any test fakes HOME (a fake HOME's cache would be
# downloaded again on every run and deleted by pytest).
#
# The pin is tests/e2e/agents/<name>/package.json (+ package-lock.json); Claude Code's is
# tests/e2e/package.json, cached as claude-code-<version>. Idempotent: when the cache already
# holds that version installed from the same two files, it only prints the path.
#
# Exit codes (stdout carries only the binary path, diagnostics go to stderr):
#   0  installed (or already installed); the path is printed
#   2  npm (or node) is not available
#   3  npm could not reach its registry (offline machine)
#   1  any other failure
set -euo pipefail

NAME=${1:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PIN=$HERE/agents/$NAME
CACHE_NAME=$NAME
case "$NAME" in
    claude) PKG=@anthropic-ai/claude-code; BIN_NAME=claude; PIN=$HERE; CACHE_NAME=claude-code ;;
    codex) PKG=@openai/codex; BIN_NAME=codex ;;
    gemini) PKG=@google/gemini-cli; BIN_NAME=gemini ;;
    *) echo "usage: install_cli.sh claude|codex|gemini" >&2; exit 1 ;;
esac
VERSION=$(sed -n "s|.*\"$PKG\": \"\\([^\"]*\\)\".*|\\1|p" "$PIN/package.json" | head -n 1)
[ -n "$VERSION" ] || { echo "install_cli.sh: no $PKG version in $PIN/package.json" >&2; exit 1; }
CACHE_ROOT=${MEMREPO_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memrepo-tests}
DEST=$CACHE_ROOT/$CACHE_NAME-$VERSION
BIN=$DEST/node_modules/.bin/$BIN_NAME

die() {
    local code=$1
    shift
    echo "install_cli.sh: $*" >&2
    exit "$code"
}

version_ok() {  # "codex-cli 0.171.0", "0.61.0"
    case "$1" in
        "$VERSION" | *" $VERSION" | "$VERSION "* | *" $VERSION "*) return 0 ;;
        *) return 1 ;;
    esac
}

installed_ok() {
    [ -x "$BIN" ] || return 1
    cmp -s "$PIN/package.json" "$DEST/package.json" || return 1
    cmp -s "$PIN/package-lock.json" "$DEST/package-lock.json" || return 1
    local out
    out=$(cd "$DEST" && HOME=$DEST/.home timeout 60 "$BIN" --version 2>/dev/null </dev/null | tail -n 1) || return 1
    version_ok "$out"
}

if installed_ok; then
    echo "$BIN"
    exit 0
fi

command -v npm >/dev/null 2>&1 || die 2 "npm not found on PATH; cannot install $PKG@$VERSION"
command -v node >/dev/null 2>&1 || die 2 "node not found on PATH; cannot install $PKG@$VERSION"

mkdir -p "$CACHE_ROOT"
# One installer at a time (two test runs starting together); the second finds the first's result.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_ROOT/.install-$NAME.lock"
    flock -w 900 9 || die 1 "timed out waiting for another install_cli.sh $NAME ($CACHE_ROOT/.install-$NAME.lock)"
    if installed_ok; then
        echo "$BIN"
        exit 0
    fi
fi
STAGE=$(mktemp -d "$CACHE_ROOT/.$CACHE_NAME-$VERSION.stage.XXXXXX")
chmod 755 "$STAGE"
LOG=$STAGE.npm.log
cleanup() { rm -rf "$STAGE" "$LOG"; }
trap cleanup EXIT

cp "$PIN/package.json" "$PIN/package-lock.json" "$STAGE/"
echo "install_cli.sh: installing $PKG@$VERSION into $DEST" >&2

# npm 11 warns about install scripts it did not run; the CLIs work without them (the native
# binary comes from a platform optional dependency), and the version check decides success.
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

STAGE_BIN=$STAGE/node_modules/.bin/$BIN_NAME
[ -x "$STAGE_BIN" ] || die 1 "npm ci finished but $STAGE_BIN is missing"
mkdir -p "$STAGE/.home"
out=$(cd "$STAGE" && HOME=$STAGE/.home timeout 60 "$STAGE_BIN" --version 2>&1 </dev/null | tail -n 1) || die 1 "installed binary does not run: $out"
version_ok "$out" || die 1 "installed binary reports version '$out', expected $VERSION"

# The .bin symlink is relative, so the staged tree can be moved into place whole.
rm -rf "$DEST"
mv "$STAGE" "$DEST"
installed_ok || die 1 "installed into $DEST but the check after moving it failed"
echo "$BIN"
