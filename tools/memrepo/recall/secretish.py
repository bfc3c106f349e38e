"""Could the redactor find a secret in this text? A cheap yes-or-no (stdlib only, no `re`: runs
before every prompt, where compiling `memrepo.format.redact`'s patterns would cost ~25 ms).

It answers yes for every text the redactor would change (tests/test_private_data.py checks
this on the redactor's own cases) and for a few that it would not: a false yes only costs a
recall-log entry its terms. Each check is a fixed substring the redactor's patterns need.
"""

from memrepo.recall import spans

# Every token pattern of `token_formats.TOKEN_PATTERNS` starts with one of these (case as written).
TOKEN_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xox", "xapp-", "AIza", "npm_", "dp.",
                  "AKIA", "ASIA", "eyJ", "SK", "fm", "Q~", ":A", "hf_", "r8_", "pat", "SG.", "sk_", "rk_",
                  "shp", "A3T", "A3-", "sm_", "-us", "xai-", "sgp_", "AKCp", "sat.", "ntn_", "EAAA", "EAAC",
                  "EAAM", "EZAK", "EZTK", "ABIA", "ACCA", "LTAI", "fo1_", "sbp_", "pul-", "dapi", "hvs.",
                  "hvb.", "p8e-", "glc_", "4b1d", "ico-", "pnu_", "_mmk", "pplx-", "glrt-", "gldt-", "glft-",
                  "dckr_", "bkua_", "cmVmd", "PMAK-", "rdme_", "ya29.", "v1.0-", "glsa_", "NRAK-", "NRII-",
                  "glcbt-", "glimt-", "gloas-", "glptt-", "ATATT3", "fio-u-", "s-s4t2", "whsec_", "glsoat-",
                  "glffct-", "secret_", "sq0atp-", "sq0csp-", "shippo_", "duffel_", "FLWSECK", "GOCSPX-",
                  "dop_v1_", "doo_v1_", "dor_v1_", "HRKU-AA", "sha256~", "sntrys_", "sntryu_", "dt0c01.",
                  "api_org_", "glagent-", "CLOJARS_", "lin_api_", "xkeysib-", "GR1348941", "rubygems_",
                  "xsmtpsib-", ".atlasv1.", "pscale_pw_", "AccountKey=", "pscale_tkn_", "pscale_oauth_",
                  "_gitlab_session=", "SharedAccessKey=", "AGE-SECRET-KEY-1", "hooks.slack.com/",
                  "discord.com/api/", "discordapp.com/api/", "pypi-AgEIcHlwaS5vcmc",
                  "webhook.office.com/webhookb2/", "key-")
# A `password = …` assignment or a password named in prose needs one of these words (lowercased).
SECRET_WORDS = ("passw", "passphrase", "passcode", "pwd", "secret", "token", "key", "credential")


def may_hold_secret(text: str) -> bool:
    """True when `memrepo.format.redact.redact(text)` might differ from `text`."""
    if not text:
        return False
    if "-----" in text or any(p in text for p in TOKEN_PREFIXES):  # PEM blocks, tokens
        return True
    low = spans.ascii_lower(text)
    if "bearer" in low or ("://" in low and "@" in low):  # bearer tokens, user:pass@host, DSNs
        return True
    return any(w in low for w in SECRET_WORDS) or _dotted_token(text)


def _dotted_token(text: str) -> bool:
    """A word shaped like a Discord bot token, the one provider format with no fixed literal:
    a part of 24+ characters, a dot, exactly 6, a dot, 27+."""
    if text.count(".") < 2:
        return False
    for word in text.split():
        parts = word.split(".")
        for i in range(len(parts) - 2):
            if len(parts[i]) >= 24 and len(parts[i + 1]) == 6 and len(parts[i + 2]) >= 27:
                return True
    return False
