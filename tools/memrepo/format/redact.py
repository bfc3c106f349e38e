"""Find and redact secret-looking strings (stdlib only: runs in the git pre-commit hook).

A secret is a provider token in its published format (over a hundred formats, after the
catalogues of gitleaks and detect-secrets), a private-key block, a password in a URL or a
bearer header, or a random-looking value after a secret word: in an assignment
(`password=…`) or in prose ("the password is …").

Patterns begin with a literal (the regex engine skips to candidates, and a text without the
literal skips the pattern), reject a start inside a longer token with a lookbehind, and use
bounded quantifiers over classes that exclude their terminators, so a scan stays linear: 1 MB
of ordinary or adversarial text takes a fraction of a second, under one even when every line
holds a secret.
"""

from __future__ import annotations

import bisect
import math
import re

# `typing` stays unloaded at runtime; mypy treats this name as always true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

ALLOW_MARKER = "memrepo: allow-secret"

# Values shorter than this in a `password=`-style assignment are never judged secret.
MIN_GENERIC_LEN = 12
MIN_GENERIC_ENTROPY = 3.0
MAX_PEM_BYTES = 65536

# A token must not continue a longer run of token or base64 characters on either side.
_BEFORE = "[A-Za-z0-9_+/-]"
_AFTER = r"(?![A-Za-z0-9_+/-])"

# (kind, prefix, rest, preview prefix length). Each pattern starts with its fixed-width
# prefix so the regex engine jumps from candidate to candidate; the left boundary is a
# lookbehind *after* the prefix (a leading one would make the engine try every position).
# The formats are the providers' published ones, as catalogued by gitleaks and detect-secrets;
# a group `v` in `rest` is the secret when the prefix is a name to keep (`AccountKey=`).
_TOKEN_PATTERNS: tuple[tuple[str, str, str, int], ...] = (
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
_OTHER_PATTERNS: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
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
    """The literal strings `prefix` matches (`gh[pousr]_`: ghp_, gho_, …)."""
    out = [""]
    for m in re.finditer(r"\\(.)|\[([^\]]*)\]|(.)", prefix):
        escaped, chars, char = m.groups()
        out = [o + c for o in out for c in (chars if chars is not None else escaped or char)]
    return tuple(out)


# (kind, pattern source, preview prefix length, literals). A text holding none of a pattern's
# literals is not searched with it (`in` costs less than a regex pass, far less on a short
# text), and a pattern is compiled the first time a text holds one: importing stays cheap.
_TOKENS = tuple(
    (kind, f"{prefix}(?<!{_BEFORE}{prefix}){rest}{_AFTER}", keep, _needles(prefix))
    for kind, prefix, rest, keep in _TOKEN_PATTERNS
) + _OTHER_PATTERNS
_COMPILED: dict[str, re.Pattern[str]] = {}

# Matched against an ASCII-lowercased copy of the text (same offsets), so the engine can
# jump to keyword candidates; case-insensitive alternation is several times slower.
_SECRET_WORDS = (
    r"passw(?:or)?d|passphrase|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key"
    r"|private[_.-]?key|credentials?"
)
# A key holding a secret word, a separator, then a quoted or a bare value on the same line.
# `(?=(?P<sfx>…))(?P=sfx)` is an atomic group: the rest of the key is never backtracked.
_ASSIGNMENT = re.compile(
    r"(?:" + _SECRET_WORDS + r")(?=(?P<sfx>[a-z0-9_.-]{0,40}))(?P=sfx)"
    r"[\"']?[ \t]{0,8}(?::=|=>|[:=])[ \t]{0,8}"
    r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'|(?P<v>[^\s\"'`,;()<>&]{1,512}))"
)
# The same words in prose: "with password X", "the password is X", "token set to `X`",
# "**Password:** X" — the word, up to four fillers or separators, then the value. A bare value
# is at least MIN_GENERIC_LEN long here, so a short word after the keyword is not consumed.
_PROSE = re.compile(
    r"(?P<word>passw(?:or)?d|passphrase|passcode|pwd|secret|token|api[ _.-]?key|apikey"
    r"|access[ _.-]?key|private[ _.-]?key|credentials?)s?(?![a-z0-9])[*_]{0,2}"
    r"(?:[ \t]{0,4}[:=][*_]{0,2}|[ \t]{1,4}(?:is|was|of|to|set|now|be|been|has|changed|-)(?![a-z0-9])){0,4}"
    r"[ \t]{1,4}\*{0,2}"
    r"(?:`(?P<bq>[^`\n]{1,512})`|\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'"
    r"|(?P<v>[^\s\"'`,;()<>&*]{" + str(MIN_GENERIC_LEN) + r",512}))"
)
_BEARER = re.compile(r"bearer[ \t]{1,8}(?P<v>[a-z0-9._~+/-]{12,2048}=*)")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")

_URL_CREDENTIALS = re.compile(
    r"://(?P<user>[^\s:/?#@\[\]\"'<>]{0,128}):(?P<v>[^\s/?#@\[\]\"'<>]{1,256})@(?=[A-Za-z0-9\[])"
)

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_PEM_MARKER = re.compile(r"-----(BEGIN|END) [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# An unterminated block (a truncated paste) still covers its header and base64 lines.
_PEM_BODY = re.compile(r"(?:[ \t]*\r?\n(?:[A-Za-z-]{1,40}: [^\n]{1,200}|[A-Za-z0-9+/=]{16,128}))+")
_PEM_BASE64 = re.compile(r"[A-Za-z0-9+/]{16}")

_PLACEHOLDER_WORDS = (
    "changeme",
    "change_me",
    "example",
    "placeholder",
    "redacted",
    "dummy",
    "xxxx",
    "****",
    "....",
    "your_",
    "your-",
    "1password",
)
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{8,}")


def find_secrets(text: str) -> list[tuple[int, str, str]]:
    """Return (1-based line, kind, masked preview) for each secret-looking string in `text`.

    Lines carrying ALLOW_MARKER are skipped; a private-key block counts as on its BEGIN line.
    """
    found = _scan(text)
    if not found:
        return []
    newlines = [m.start() for m in re.finditer("\n", text)]
    return [
        (bisect.bisect_left(newlines, start) + 1, kind, preview)
        for start, _end, kind, preview in found
    ]


def redact(text: str) -> str:
    """Replace each secret in `text` with `[REDACTED:<kind>]` (whole PEM blocks); idempotent."""
    found = _scan(text)
    if not found:
        return text
    out = []
    pos = 0
    for start, end, kind, _preview in found:
        out.append(text[pos:start])
        out.append("[REDACTED:" + kind + "]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _scan(text: str) -> list[tuple[int, int, str, str]]:
    """All accepted findings as (start, end, kind, preview), sorted, without overlaps.

    Sources run from most to least specific; a later finding overlapping an accepted one is
    dropped, so `password = ghp_…` is a github-token and not a generic assignment.
    """
    allowed = _allowed_lines(text)
    starts: list[int] = []
    accepted: list[tuple[int, int, str, str]] = []
    for start, end, kind, preview in _candidates(text):
        i = bisect.bisect_right(starts, start)
        if i and accepted[i - 1][1] > start:
            continue
        if i < len(accepted) and accepted[i][0] < end:
            continue
        if _is_allowed(allowed, start):
            kind = ""  # still claims its span: nothing inside an allowed secret is reported
        starts.insert(i, start)
        accepted.insert(i, (start, end, kind, preview))
    return [finding for finding in accepted if finding[2]]


def _candidates(text: str) -> Iterator[tuple[int, int, str, str]]:
    yield from _pem_blocks(text)
    yield from _tokens(text)
    for m in _URL_CREDENTIALS.finditer(text):
        user, value = m.group("user"), m.group("v")
        # Same user and password is a local default (postgres:postgres@localhost), not a leak.
        if value != user and value != "password" and not _is_placeholder(value):
            yield m.start("v"), m.end("v"), "url-credentials", _mask(value, 0)
    low = text.lower() if text.isascii() else text.translate(_ASCII_LOWER)
    for m in _BEARER.finditer(low):
        value = text[m.start("v") : m.end("v")]
        if looks_random(value):
            yield m.start("v"), m.end("v"), "bearer-token", _mask(value, 0)
    judged: set[int] = set()  # where an assignment's value starts: prose need not judge it again
    for m in _ASSIGNMENT.finditer(low):
        start, end, value = _value(text, m)
        judged.add(start)
        yield from _assignment(low, m, start, end, value)
    for m in _PROSE.finditer(low):
        start, end, value = _value(text, m)
        # After "password" a value is one; after "token" or "secret" it may name a thing.
        if start not in judged and looks_random(value):
            if m.group("word").startswith("pass") or not _identifier_like(value):
                yield start, end, "secret-in-prose", _mask(value, 0)


def _tokens(text: str) -> Iterator[tuple[int, int, str, str]]:
    for kind, source, keep, needles in _TOKENS:
        for needle in needles:
            if needle in text:
                break
        else:
            continue
        pattern = _COMPILED.get(source) or _COMPILED.setdefault(source, re.compile(source))
        value, lead = "v" in pattern.groupindex, "lead" in pattern.groupindex
        for m in pattern.finditer(text):
            start, end = m.span("v") if value else m.span()
            start = m.start("lead") if lead else start
            token = text[start:end].rstrip(".")  # a full stop ends the sentence, not the token
            if _is_placeholder(token):
                continue  # AWS's documentation keys (…EXAMPLE), `sk_test_xxxx…`
            yield start, start + len(token), kind, _mask(token, keep)


def _value(text: str, m: re.Match[str]) -> tuple[int, int, str]:
    """The start, end and text of the value an assignment or a prose match captured."""
    group = m.lastgroup or "v"  # the value group always closes last
    start, end = m.start(group), m.end(group)
    value = text[start:end]
    if group == "v":  # a bare value ending a sentence keeps its full stop
        value = value.rstrip(".")
        end = start + len(value)
    return start, end, value


def _assignment(
    low: str, m: re.Match[str], start: int, end: int, value: str
) -> Iterator[tuple[int, int, str, str]]:
    key = low[max(0, m.start() - 8) : m.end("sfx")]
    aws_name = "secret" in key and ("aws" in key or "access" in key)
    if aws_name and _AWS_SECRET_VALUE.fullmatch(value):
        if "EXAMPLE" not in value:  # AWS's documentation keys
            yield start, end, "aws-secret-access-key", _mask(value, 0)
    elif looks_random(value):
        yield start, end, "secret-assignment", _mask(value, 0)


def _pem_blocks(text: str) -> Iterator[tuple[int, int, str, str]]:
    markers = list(_PEM_MARKER.finditer(text))
    for i, m in enumerate(markers):
        if m.group(1) != "BEGIN":
            continue
        header = m.group().strip("-")
        nxt = markers[i + 1] if i + 1 < len(markers) else None
        if nxt and nxt.group(1) == "END" and nxt.start() - m.end() <= MAX_PEM_BYTES:
            if _PEM_BASE64.search(text, m.end(), nxt.start()):
                yield m.start(), nxt.end(), "private-key", header + "…"
            continue
        body = _PEM_BODY.match(text, m.end())
        if body and _PEM_BASE64.search(text, body.start(), body.end()):
            yield m.start(), body.end(), "private-key", header + "…"


def looks_random(value: str) -> bool:
    """True for a value that reads like a generated secret rather than a word or a reference.

    It must be long, not a placeholder or a path, hold a run of 8+ letters and digits that
    mixes both (what passwords and keys have and names, versions and paths lack), and have a
    Shannon entropy of at least MIN_GENERIC_ENTROPY bits per character.
    """
    if len(value) < MIN_GENERIC_LEN or _is_placeholder(value):
        return False
    if value[0] in "/~." or "://" in value:
        return False
    if not any(_mixed(run) for run in _RANDOM_RUN.findall(value)):
        return False
    return shannon_entropy(value) >= MIN_GENERIC_ENTROPY


# c·log2(c) for the character counts of values judged here (most are short): a lookup is
# several times faster than the arithmetic in a generator, and a page of secrets has many.
_C_LOG2_C = [0.0] + [c * math.log2(c) for c in range(1, 1025)]


def shannon_entropy(value: str) -> float:
    """Shannon entropy of `value` in bits per character (0.0 for an empty string)."""
    if not value:
        return 0.0
    n = len(value)
    counts = map(value.count, set(value))
    if n < len(_C_LOG2_C):
        total = sum(map(_C_LOG2_C.__getitem__, counts))
    else:
        total = sum(c * math.log2(c) for c in counts)
    return max(0.0, math.log2(n) - total / n)  # H = log2 n − Σ c·log2 c / n


def _mixed(run: str) -> bool:
    """A run of ASCII letters and digits holding both."""
    return not run.isdigit() and not run.isalpha()


_WORD_PIECE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^A-Za-z0-9]")


def _identifier_like(value: str) -> bool:
    """True for a name made of words, acronyms and at most two numbers (`AuthProvider2Client`,
    `utf8mb4_unicode`); a generated string has lone lowercase letters or more numbers."""
    numbers = 0
    for piece in _WORD_PIECE.findall(value):
        if piece.isdigit():
            numbers += 1
        elif piece.isalpha() and not piece.isupper() and len(piece) - piece[0].isupper() < 2:
            return False
    return numbers <= 2


def _is_placeholder(value: str) -> bool:
    low = value.lower()
    if not low or low[0] in "<${%[*" or "{{" in low:
        return True
    return any(word in low for word in _PLACEHOLDER_WORDS)


def _mask(secret: str, keep: int) -> str:
    """`ghp_…a1b2`: the well-known prefix, an ellipsis, and the last 4 characters if long."""
    tail = secret[-4:] if len(secret) - keep >= 12 else ""
    return secret[:keep] + "…" + tail


def _allowed_lines(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of the lines carrying ALLOW_MARKER, in order."""
    starts: list[int] = []
    ends: list[int] = []
    pos = text.find(ALLOW_MARKER)
    while pos >= 0:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        starts.append(text.rfind("\n", 0, pos) + 1)
        ends.append(end)
        pos = text.find(ALLOW_MARKER, end)
    return starts, ends


def _is_allowed(lines: tuple[list[int], list[int]], offset: int) -> bool:
    i = bisect.bisect_right(lines[0], offset) - 1
    return i >= 0 and offset <= lines[1][i]
