"""Could the redactor find a secret in this text? A cheap yes-or-no (stdlib only, no `re`: runs
before every prompt, where compiling `memrepo.format.redact`'s patterns would cost ~25 ms).

It answers yes for every text the redactor would change (tests/test_private_data.py checks
this on the redactor's own cases) and for a few that it would not: a false yes only costs a
recall-log entry its terms. Each check is a fixed substring the redactor's patterns need.
"""

from memrepo.recall import spans

# Every token pattern of `redact._TOKEN_PATTERNS` starts with one of these (case as written).
TOKEN_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "xapp-",
                  "k_live_", "AIza", "npm_", "dp.", "AKIA", "ASIA", "eyJ")
# A `password = …` style assignment needs one of these words (lowercased) and a separator.
SECRET_WORDS = ("passw", "passphrase", "pwd", "secret", "token", "key", "credential")
SEPARATORS = (":", "=")


def may_hold_secret(text: str) -> bool:
    """True when `memrepo.format.redact.redact(text)` might differ from `text`."""
    if not text:
        return False
    if "-----" in text or any(p in text for p in TOKEN_PREFIXES):  # PEM blocks, tokens
        return True
    low = spans.ascii_lower(text)
    if "bearer" in low or ("://" in low and "@" in low):  # bearer tokens, user:pass@host
        return True
    return any(sep in low for sep in SEPARATORS) and any(w in low for w in SECRET_WORDS)
