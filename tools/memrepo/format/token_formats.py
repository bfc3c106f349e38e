"""The token formats the redactor knows (stdlib only): each provider's published format, as
catalogued by gitleaks and detect-secrets, compiled lazily by `memrepo.format.redact`.

`TOKENS` is (kind, pattern source, preview prefix length, literals); the prompt path's
pre-check (`memrepo.recall.secretish`) knows a literal of each.
"""

from __future__ import annotations

# A token must not continue a longer run of token or base64 characters on either side.
_BEFORE = "[A-Za-z0-9_+/-]"
_AFTER = r"(?![A-Za-z0-9_+/-])"

# (kind, prefix, rest, preview prefix length). Each pattern starts with its fixed-width
# prefix so the regex engine jumps from candidate to candidate; the left boundary is a
# lookbehind *after* the prefix (a leading one would make the engine try every position).
# The formats are the providers' published ones, as catalogued by gitleaks and detect-secrets;
# a group `v` in `rest` is the secret when the prefix is a name to keep (`AccountKey=`).
TOKEN_PATTERNS: tuple[tuple[str, str, str, int], ...] = (
    # AI providers
    ("anthropic-key", "sk-ant-", "[A-Za-z0-9_-]{20,250}", 7),  # api03- and admin01- keys
    ("openrouter-key", "sk-or-v1-", "[a-f0-9]{64}", 9),
    ("openai-key", "sk-", "(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}", 8),
    ("openai-key", "sk-", "[A-Za-z0-9]{32,200}", 3),
    ("huggingface-token", "hf_", "[A-Za-z0-9]{34,40}", 3),
    ("huggingface-token", "api_org_", "[A-Za-z0-9]{34,40}", 8),
    ("groq-key", "gsk_", "[A-Za-z0-9]{52}", 4),
    ("replicate-token", "r8_", "[A-Za-z0-9]{37}", 3),
    ("perplexity-key", "pplx-", "[A-Za-z0-9]{48}", 5),
    ("xai-key", "xai-", "[A-Za-z0-9_-]{70,120}", 4),
    # Code hosting, packages, CI
    ("github-token", "gh[pousr]_", "[A-Za-z0-9]{36,251}", 4),
    ("github-token", "github_pat_", "[A-Za-z0-9_]{40,244}", 11),
    # GitLab personal, runner, deploy, feed, SCIM, feature-flag, CI job, agent, mail, OAuth
    # application, pipeline trigger and runner registration tokens, and the session cookie;
    # a routable token ends in `.` and 9 characters.
    ("gitlab-token", "glpat-", r"[A-Za-z0-9_-]{20,300}(?:\.[a-z0-9]{9})?", 6),
    ("gitlab-token", "glrt-", r"[A-Za-z0-9_-]{20,300}(?:\.[a-z0-9]{9})?", 5),
    ("gitlab-token", "gldt-", "[A-Za-z0-9_-]{20,300}", 5),
    ("gitlab-token", "glft-", "[A-Za-z0-9_-]{20,300}", 5),
    ("gitlab-token", "glsoat-", "[A-Za-z0-9_-]{20,300}", 7),
    ("gitlab-token", "glffct-", "[A-Za-z0-9_-]{20,300}", 7),
    ("gitlab-token", "glcbt-", "[A-Za-z0-9]{1,5}_[A-Za-z0-9_-]{20,300}", 6),
    ("gitlab-token", "glagent-", "[A-Za-z0-9_-]{50,300}", 8),
    ("gitlab-token", "glimt-", "[A-Za-z0-9_-]{25}", 6),
    ("gitlab-token", "gloas-", "[A-Za-z0-9_-]{64}", 6),
    ("gitlab-token", "glptt-", "[a-f0-9]{40}", 6),
    ("gitlab-token", "GR1348941", "[A-Za-z0-9_-]{20,300}", 9),
    ("gitlab-token", "_gitlab_session=", "(?P<v>[a-z0-9]{32})", 0),
    ("npm-token", "npm_", "[A-Za-z0-9]{36}", 4),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc", "[A-Za-z0-9_-]{50,1000}", 5),
    ("rubygems-key", "rubygems_", "[a-f0-9]{48}", 9),
    ("clojars-token", "CLOJARS_", "[A-Za-z0-9]{60}", 8),
    ("dockerhub-token", "dckr_", "(?:pat|oat)_[A-Za-z0-9_-]{27,64}", 9),
    ("buildkite-token", "bkua_", "[a-f0-9]{40}", 5),
    ("sourcegraph-token", "sgp_", "(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}", 4),
    ("artifactory-key", "AKCp", "[A-Za-z0-9]{69}", 4),
    ("artifactory-key", "cmVmd", "[A-Za-z0-9]{59}", 5),
    ("harness-token", r"pat\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", 4),
    ("harness-token", r"sat\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", 4),
    ("scalingo-token", "tk-us-", "[A-Za-z0-9_-]{48}", 6),
    # Chat, collaboration, email
    ("slack-token", "xox[abceoprs]-", "[A-Za-z0-9-]{10,250}", 5),
    ("slack-token", "xoxd-", "[A-Za-z0-9%/+_-]{100,1000}={0,2}", 5),  # session cookie
    ("slack-token", "xapp-", "[A-Za-z0-9-]{10,250}", 5),
    ("linear-key", "lin_api_", "[A-Za-z0-9]{40}", 8),
    ("notion-token", "ntn_", "[0-9]{11}[A-Za-z0-9]{35}", 4),
    ("notion-token", "secret_", "[A-Za-z0-9]{43}", 7),  # Notion's older integration tokens
    ("airtable-token", "pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}", 3),
    ("atlassian-token", "ATATT3", "[A-Za-z0-9_=-]{186}", 6),
    ("postman-key", "PMAK-", "[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", 5),
    ("readme-key", "rdme_", "[a-z0-9]{70}", 5),
    ("frameio-token", "fio-u-", "[A-Za-z0-9_=-]{64}", 6),
    ("intra42-secret", "s-s4t2", "(?:ud|af)-[a-f0-9]{64}", 9),
    ("sendgrid-key", r"SG\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", 3),
    ("twilio-key", "SK", "[0-9a-fA-F]{32}", 2),  # an API key; `AC…` account SIDs are ids
    ("mailgun-key", "key-", "[a-f0-9]{32}", 4),
    ("brevo-key", "xkeysib-", "[a-f0-9]{64}-[A-Za-z0-9]{16}", 8),
    ("brevo-key", "xsmtpsib-", "[a-f0-9]{64}-[A-Za-z0-9]{16}", 9),
    # Payments and commerce (publishable keys, pk_…, are public and not listed)
    ("stripe-key", "sk_", "(?:live|test|prod)_[A-Za-z0-9]{16,247}", 8),
    ("stripe-key", "rk_", "(?:live|test|prod)_[A-Za-z0-9]{16,247}", 8),
    ("webhook-secret", "whsec_", "[A-Za-z0-9+/]{32,128}={0,2}", 6),  # Stripe, Svix
    ("shopify-token", "shp", "(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", 6),
    ("square-token", "sq0atp-", "[A-Za-z0-9_-]{22,60}", 7),
    ("square-token", "sq0csp-", "[A-Za-z0-9_-]{43}", 7),
    ("square-token", "EAAA", "[A-Za-z0-9_-]{60}", 4),
    ("facebook-token", "EAAC", "[A-Za-z0-9]{100,1024}", 4),
    ("facebook-token", "EAAM", "[A-Za-z0-9]{100,1024}", 4),
    ("shippo-key", "shippo_", "(?:live|test)_[a-fA-F0-9]{40}", 12),
    ("duffel-token", "duffel_", "(?:live|test)_[A-Za-z0-9_=-]{43}", 12),
    ("easypost-key", "EZAK", "[A-Za-z0-9]{54}", 4),
    ("easypost-key", "EZTK", "[A-Za-z0-9]{54}", 4),  # test keys
    ("flutterwave-key", "FLWSECK", "(?:_TEST)?-[a-hA-H0-9]{32}-X", 7),
    # Cloud and infrastructure
    ("google-api-key", "AIza", "[A-Za-z0-9_-]{35}", 4),
    ("google-oauth-secret", "GOCSPX-", "[A-Za-z0-9_-]{28}", 7),
    ("google-oauth-token", r"ya29\.", "[A-Za-z0-9_-]{30,2048}", 5),
    ("aws-access-key-id", "A[KS]IA", "[A-Z0-9]{16}", 4),
    ("aws-access-key-id", "ABIA", "[A-Z0-9]{16}", 4),
    ("aws-access-key-id", "ACCA", "[A-Z0-9]{16}", 4),
    ("aws-access-key-id", "A3T", "[A-Z0-9]{17}", 4),
    ("azure-storage-key", "AccountKey=", "(?P<v>[A-Za-z0-9+/]{86}==)", 0),
    ("azure-storage-key", "SharedAccessKey=", "(?P<v>[A-Za-z0-9+/]{43}=)", 0),
    ("alibaba-access-key-id", "LTAI", "[A-Za-z0-9]{20}", 4),
    ("digitalocean-token", "dop_v1_", "[a-f0-9]{64}", 7),
    ("digitalocean-token", "doo_v1_", "[a-f0-9]{64}", 7),
    ("digitalocean-token", "dor_v1_", "[a-f0-9]{64}", 7),
    ("heroku-key", "HRKU-AA", "[A-Za-z0-9_-]{58}", 7),
    ("flyio-token", "fo1_", "[A-Za-z0-9_-]{43}", 4),
    ("flyio-token", "fm", "(?:1a|1r|2)_[A-Za-z0-9+/]{100,8192}={0,3}", 4),
    ("supabase-key", "sbp_", "[a-z0-9]{40}", 4),
    ("supabase-key", "sb_secret_", "[A-Za-z0-9_-]{31}", 10),
    ("planetscale-token", "pscale_tkn_", "[A-Za-z0-9_=.-]{32,64}", 11),
    ("planetscale-token", "pscale_pw_", "[A-Za-z0-9_=.-]{32,64}", 10),
    ("planetscale-token", "pscale_oauth_", "[A-Za-z0-9_=.-]{32,64}", 13),
    ("pulumi-token", "pul-", "[a-f0-9]{40}", 4),
    ("databricks-token", "dapi", "[a-f0-9]{32}(?:-[0-9])?", 4),
    ("cloudflare-origin-ca-key", r"v1\.0-", "[a-f0-9]{24}-[a-f0-9]{146}", 5),
    ("openshift-token", "sha256~", "[A-Za-z0-9_-]{43}", 7),
    ("vault-token", r"hvs\.", "[A-Za-z0-9_-]{90,120}", 4),
    ("vault-token", r"hvb\.", "[A-Za-z0-9_-]{138,300}", 4),
    ("doppler-token", r"dp\.", r"(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,64}", 6),
    ("1password-token", "ops_eyJ", "[A-Za-z0-9+/]{250,8192}={0,3}", 4),
    ("1password-secret-key", "A3-", "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}", 3),
    ("age-secret-key", "AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", 16),
    ("adobe-client-secret", "p8e-", "[A-Za-z0-9]{32}", 4),
    # Observability and data
    ("grafana-token", "glc_", "[A-Za-z0-9+/]{32,400}={0,2}", 4),
    ("grafana-token", "glsa_", "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", 5),
    ("grafana-token", "eyJrIjoi", "[A-Za-z0-9]{70,400}={0,2}", 8),
    ("newrelic-key", "NRAK-", "[A-Za-z0-9]{27}", 5),
    ("newrelic-key", "NRII-", "[A-Za-z0-9-]{32}", 5),
    ("sentry-token", "sntrys_", "eyJ[A-Za-z0-9+/]{30,400}={0,2}_[A-Za-z0-9+/]{43}", 7),
    ("sentry-token", "sntryu_", "[a-f0-9]{64}", 7),
    ("dynatrace-token", r"dt0c01\.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", 7),
    ("clickhouse-key", "4b1d", "[A-Za-z0-9]{38}", 4),
    ("infracost-token", "ico-", "[A-Za-z0-9]{32}", 4),
    ("prefect-key", "pnu_", "[A-Za-z0-9]{36}", 4),
    ("settlemint-token", "sm_", "(?:aat|pat|sat)_[A-Za-z0-9]{16}", 7),
    ("jwt", "eyJ", r"[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{10,4096}", 3),
)


def _after_lead(lead: str, anchor: str, rest: str, edge: str = _BEFORE) -> str:
    """A token found by the literal `anchor` inside it: the fixed-width `lead` before the anchor
    (group `lead`, where the finding starts) and `rest` after it; no `edge` character touches
    either end."""
    return f"{anchor}(?<=(?P<lead>{lead}){anchor})(?<!{edge}{lead}{anchor}){rest}(?!{edge})"


def _url_path(host_path: str, rest: str) -> str:
    """A webhook URL's secret path (group `v` in `rest`) after `host_path`, a host that does not
    continue a longer host name."""
    return f"{host_path}(?<![A-Za-z0-9-]{host_path}){rest}{_AFTER}"


# (kind, pattern, preview prefix length, literals) for the tokens whose literal is not their
# prefix; a match holds one of the literals.
OTHER_PATTERNS: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    ("mailchimp-key", _after_lead("[a-f0-9]{32}", "-us", "[0-9]{1,2}"), 0, ("-us",)),
    # Azure AD client secrets: three characters, a digit, `Q~`, then 31 to 34 more; a full
    # stop may end the sentence after one.
    ("azure-client-secret",
     _after_lead("[A-Za-z0-9_~.]{3}[0-9]", "Q~", "[A-Za-z0-9_~.-]{31,34}", "[A-Za-z0-9_~+/-]"), 0, ("Q~",)),
    ("maxmind-key", _after_lead("[A-Za-z0-9]{6}_[A-Za-z0-9]{29}", "_mmk", ""), 0, ("_mmk",)),
    ("terraform-token", _after_lead("[A-Za-z0-9]{14}", r"\.atlasv1\.", "[A-Za-z0-9_=-]{60,70}"), 0,
     (".atlasv1.",)),
    # A bot token is the bot's numeric id, a colon, and the secret: only the secret is hidden.
    ("telegram-bot-token", r":(?P<v>A(?<=[0-9]{5}:A)[A-Za-z0-9_-]{34})(?![A-Za-z0-9_-])", 1, (":A",)),
    ("slack-webhook", _url_path(
        r"hooks\.slack\.com/", "(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9][A-Za-z0-9/]{39,160})"),
     0, ("hooks.slack.com/",)),
    # A bot token: the bot's id in base64 (24 to 26 characters), a 6-character timestamp and
    # an HMAC of 27 (older) to 38 characters.
    ("discord-bot-token", r"[MNO](?<![A-Za-z0-9_-][MNO])[A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"
     + _AFTER, 0, (".",)),
    # A Sentry DSN's key is the user part of its URL: 32 hex digits (and an old `:secret`).
    ("sentry-dsn", r"://(?P<v>[a-f0-9]{32}(?::[a-f0-9]{32})?)@", 0, ("://",)),
    ("discord-webhook", _url_path(
        r"discord\.com/api/", "(?:v[0-9]{1,2}/)?webhooks/(?P<v>[0-9]{17,20}/[A-Za-z0-9_-]{60,80})"),
     0, ("discord.com/api/",)),
    ("discord-webhook", _url_path(
        r"discordapp\.com/api/", "(?:v[0-9]{1,2}/)?webhooks/(?P<v>[0-9]{17,20}/[A-Za-z0-9_-]{60,80})"),
     0, ("discordapp.com/api/",)),
    ("teams-webhook", _url_path(
        r"webhook\.office\.com/webhookb2/", "(?P<v>[A-Za-z0-9][A-Za-z0-9@/_-]{99,400})"),
     0, ("webhook.office.com/webhookb2/",)),
)


def _needles(prefix: str) -> tuple[str, ...]:
    """The literal strings `prefix` matches (`gh[pousr]_`: ghp_, gho_, …). Read by hand, not
    with a regex: this runs for every pattern at import, and a waiting `memrepo add` imports
    this module for one short text (a regex here cost ~5 M instructions, issue 44)."""
    if "\\" not in prefix and "[" not in prefix:
        return (prefix,)
    out = [""]
    i = 0
    while i < len(prefix):
        if prefix[i] == "\\":  # an escaped character stands for itself
            chars, i = prefix[i + 1], i + 2
        elif prefix[i] == "[":  # a class of literal characters
            end = prefix.index("]", i)
            chars, i = prefix[i + 1 : end], end + 1
        else:
            chars, i = prefix[i], i + 1
        out = [o + c for o in out for c in chars]
    return tuple(out)


# (kind, pattern source, preview prefix length, literals). A text holding none of a pattern's
# literals is not searched with it (`in` costs less than a regex pass, far less on a short
# text), and a pattern is compiled the first time a text holds one: importing stays cheap.
TOKENS = tuple(
    (kind, f"{prefix}(?<!{_BEFORE}{prefix}){rest}{_AFTER}", keep, _needles(prefix))
    for kind, prefix, rest, keep in TOKEN_PATTERNS
) + OTHER_PATTERNS
