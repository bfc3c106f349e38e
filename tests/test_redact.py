"""Secret-looking strings: detection, the allow marker, redaction.

Every fake secret is assembled from pieces at run time, so this file holds no literal token
that a secret scanner (or memrepo's own pre-commit hook) would flag.
"""

from __future__ import annotations

import base64
import json
import random
import time

import pytest

from memrepo.format.redact import ALLOW_MARKER, find_secrets, looks_random, redact, shannon_entropy


def b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


GH = "gh" + "p_" + "a1B2" * 9
AKIA = "AK" + "IA" + "2E4Q" * 4
AWS_SECRET = "Ab3/" * 10
GENERIC = "Xk9mP2qR" + "7vL4nT8w"
JWT = ".".join(
    [b64url({"alg": "HS256", "typ": "JWT"}), b64url({"sub": "1234567890"}), "c2lnbmF0dXJl" * 3]
)
PEM_BODY = "\n".join(["MIIEow" + "IBAAKCAQEA" * 6] * 3)


def pem(label: str, body: str = PEM_BODY, newline: str = "\n") -> str:
    dashes = "-" * 5
    begin = dashes + "BEGIN " + label + " PRIV" + "ATE KEY" + dashes
    end = dashes + "END " + label + " PRIV" + "ATE KEY" + dashes
    return begin + newline + body.replace("\n", newline) + newline + end


def fake(n: int, alphabet: str = "Xk9mP2qR7vL4nT8wB3cD6fG1hJ5sY0zA") -> str:
    """`n` characters cycling through `alphabet`: token-shaped, and no real token."""
    return (alphabet * (n // len(alphabet) + 1))[:n]


HEX = "3f9a0c7e1b5d8264"
LOWER = "k3j9x2m8q7w1z5v4b6n0p"
UPPER = "K7XQ9ZP2M4TW8RJ3"
URLSAFE = "Xk9-mP2_qR7vL4nT8wB3cD6fG1hJ5sY0zA"
BASE64 = "Xk9+mP2/qR7vL4nT8wB3cD6fG1hJ5sY0zA"
UUID = "4f1c2b3a-9d8e-4c7b-a6f5-0e1d2c3b4a59"
PROSE_SECRET = "S3cr3t" + "Pa55w0rdX9q"

PROVIDER_POSITIVES = [
    # (text, kind, preview): each provider format, assembled so this file holds no token
    ("sk" + "-ant-admin01-" + fake(93, URLSAFE) + "AA", "anthropic-key", "sk-ant-…fGAA"),
    ("OPENROUTER_API_KEY=" + "sk" + "-or-v1-" + fake(64, HEX), "openrouter-key", "sk-or-v1-…8264"),
    ("hf" + "_" + fake(34), "huggingface-token", "hf_…zAXk"),
    ("api" + "_org_" + fake(34), "huggingface-token", "api_org_…zAXk"),
    ("gs" + "k_" + fake(52), "groq-key", "gsk_…B3cD"),
    ("r8" + "_" + fake(37), "replicate-token", "r8_…k9mP"),
    ("pp" + "lx-" + fake(48), "perplexity-key", "pplx-…nT8w"),
    ("xa" + "i-" + fake(80), "xai-key", "xai-…nT8w"),
    ("gl" + "pat-" + fake(27, URLSAFE) + ".01" + fake(7, LOWER), "gitlab-token", "glpat-…9x2m"),
    ("gl" + "rt-" + fake(20, URLSAFE), "gitlab-token", "glrt-…8wB3"),
    ("gl" + "dt-" + fake(20, URLSAFE), "gitlab-token", "gldt-…8wB3"),
    ("gl" + "ft-" + fake(20, URLSAFE), "gitlab-token", "glft-…8wB3"),
    ("gl" + "soat-" + fake(20, URLSAFE), "gitlab-token", "glsoat-…8wB3"),
    ("gl" + "ffct-" + fake(20, URLSAFE), "gitlab-token", "glffct-…8wB3"),
    ("gl" + "cbt-" + "2" + "_" + fake(20, URLSAFE), "gitlab-token", "glcbt-…8wB3"),
    ("gl" + "agent-" + fake(50, URLSAFE), "gitlab-token", "glagent-…L4nT"),
    ("gl" + "imt-" + fake(25, URLSAFE), "gitlab-token", "glimt-…D6fG"),
    ("gl" + "oas-" + fake(64, URLSAFE), "gitlab-token", "gloas-…hJ5s"),
    ("gl" + "ptt-" + fake(40, HEX), "gitlab-token", "glptt-…0c7e"),
    ("GR" + "1348941" + fake(20, URLSAFE), "gitlab-token", "GR1348941…8wB3"),
    ("Cookie: _gitlab" + "_session=" + fake(32, LOWER), "gitlab-token", "…8q7w"),
    ("py" + "pi-AgEIcHlwaS5vcmc" + fake(70, URLSAFE), "pypi-token", "pypi-…zAXk"),
    ("ruby" + "gems_" + fake(48, HEX), "rubygems-key", "rubygems_…8264"),
    ("CLO" + "JARS_" + fake(60), "clojars-token", "CLOJARS_…hJ5s"),
    ("dc" + "kr_pat_" + fake(27, URLSAFE), "dockerhub-token", "dckr_pat_…fG1h"),
    ("bk" + "ua_" + fake(40, HEX), "buildkite-token", "bkua_…0c7e"),
    ("sg" + "p_" + fake(16, HEX) + "_" + fake(40, HEX), "sourcegraph-token", "sgp_…0c7e"),
    ("AK" + "Cp" + fake(69), "artifactory-key", "AKCp…k9mP"),
    ("cm" + "Vmd" + fake(59), "artifactory-key", "cmVmd…1hJ5"),
    ("pa" + "t." + fake(22, URLSAFE) + "." + fake(24) + "." + fake(20), "harness-token", "pat.…B3cD"),
    ("sa" + "t." + fake(22, URLSAFE) + "." + fake(24) + "." + fake(20), "harness-token", "sat.…B3cD"),
    ("tk" + "-us-" + fake(48, URLSAFE), "scalingo-token", "tk-us-…7vL4"),
    ("xo" + "xc-" + "2541715624-2536568458595-2560197464944-" + fake(64, HEX), "slack-token", "xoxc-…8264"),
    ("d=xo" + "xd-" + fake(120, BASE64) + "%3D", "slack-token", "xoxd-…w%3D"),
    ("lin" + "_api_" + fake(40), "linear-key", "lin_api_…P2qR"),
    ("nt" + "n_" + "12345678901" + fake(35), "notion-token", "ntn_…AXk9"),
    ("NOTION=" + "sec" + "ret_" + fake(43), "notion-token", "secret_…R7vL"),
    ("pa" + "t" + fake(14) + "." + fake(64, HEX), "airtable-token", "pat…8264"),
    ("AT" + "ATT3" + fake(186, URLSAFE), "atlassian-token", "ATATT3…L4nT"),
    ("PM" + "AK-" + fake(24, HEX) + "-" + fake(34, HEX), "postman-key", "PMAK-…643f"),
    ("rd" + "me_" + fake(70, LOWER), "readme-key", "rdme_…9x2m"),
    ("fio" + "-u-" + fake(64, URLSAFE), "frameio-token", "fio-u-…hJ5s"),
    ("s-s4" + "t2ud-" + fake(64, HEX), "intra42-secret", "s-s4t2ud-…8264"),
    ("SG" + "." + fake(22, URLSAFE) + "." + fake(43, URLSAFE), "sendgrid-key", "SG.…P2_q"),
    ("TWILIO_KEY_SID " + "SK" + fake(32, HEX), "twilio-key", "SK…8264"),
    ("xkey" + "sib-" + fake(64, HEX) + "-" + fake(16), "brevo-key", "xkeysib-…nT8w"),
    ("xsmtp" + "sib-" + fake(64, HEX) + "-" + fake(16), "brevo-key", "xsmtpsib-…nT8w"),
    ("sk" + "_test_" + fake(24), "stripe-key", "sk_test_…6fG1"),
    ("rk" + "_test_" + fake(24), "stripe-key", "rk_test_…6fG1"),
    ("sk" + "_prod_" + fake(24), "stripe-key", "sk_prod_…6fG1"),
    ("wh" + "sec_" + fake(32), "webhook-secret", "whsec_…Y0zA"),
    ("sh" + "pat_" + fake(32, HEX), "shopify-token", "shpat_…8264"),
    ("sh" + "pss_" + fake(32, HEX), "shopify-token", "shpss_…8264"),
    ("sq0" + "atp-" + fake(22, URLSAFE), "square-token", "sq0atp-…B3cD"),
    ("sq0" + "csp-" + fake(43, URLSAFE), "square-token", "sq0csp-…P2_q"),
    ("EA" + "AA" + fake(60, URLSAFE), "square-token", "EAAA…6fG1"),
    ("EA" + "AC" + fake(120), "facebook-token", "EAAC…6fG1"),
    ("EA" + "AM" + fake(120), "facebook-token", "EAAM…6fG1"),
    ("shi" + "ppo_live_" + fake(40, HEX), "shippo-key", "shippo_live_…0c7e"),
    ("duf" + "fel_test_" + fake(43, URLSAFE), "duffel-token", "duffel_test_…P2_q"),
    ("EZ" + "AK" + fake(54), "easypost-key", "EZAK…cD6f"),
    ("EZ" + "TK" + fake(54), "easypost-key", "EZTK…cD6f"),
    ("FLW" + "SECK_TEST-" + fake(32, "a1b2c3d4e5f6g7h8") + "-X", "flutterwave-key", "FLWSECK…h8-X"),
    ("GOC" + "SPX-" + fake(28, URLSAFE), "google-oauth-secret", "GOCSPX-…G1hJ"),
    ("ya" + "29." + fake(60, URLSAFE), "google-oauth-token", "ya29.…6fG1"),
    ("AB" + "IA" + fake(16, UPPER), "aws-access-key-id", "ABIA…8RJ3"),
    ("AC" + "CA" + fake(16, UPPER), "aws-access-key-id", "ACCA…8RJ3"),
    ("A3" + "T" + fake(17, UPPER), "aws-access-key-id", "A3TK…RJ3K"),
    ("DefaultEndpointsProtocol=https;AccountName=acme;Account" + "Key=" + fake(86, BASE64) + "==;EndpointSuffix=core.windows.net", "azure-storage-key", "…8w=="),
    ("Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccess" + "Key=" + fake(43, BASE64) + "=", "azure-storage-key", "…2/q="),
    ("LT" + "AI" + fake(20), "alibaba-access-key-id", "LTAI…B3cD"),
    ("do" + "p_v1_" + fake(64, HEX), "digitalocean-token", "dop_v1_…8264"),
    ("do" + "o_v1_" + fake(64, HEX), "digitalocean-token", "doo_v1_…8264"),
    ("do" + "r_v1_" + fake(64, HEX), "digitalocean-token", "dor_v1_…8264"),
    ("HR" + "KU-AA" + fake(58, URLSAFE), "heroku-key", "HRKU-AA…cD6f"),
    ("fo" + "1_" + fake(43, URLSAFE), "flyio-token", "fo1_…P2_q"),
    ("FlyV1 " + "fm" + "2_" + fake(120, BASE64), "flyio-token", "fm2_…nT8w"),
    ("sb" + "p_" + fake(40, LOWER), "supabase-key", "sbp_…4b6n"),
    ("sb" + "_secret_" + fake(31, URLSAFE), "supabase-key", "sb_secret_…J5sY"),
    ("psc" + "ale_tkn_" + fake(40, URLSAFE), "planetscale-token", "pscale_tkn_…9-mP"),
    ("psc" + "ale_pw_" + fake(40, URLSAFE), "planetscale-token", "pscale_pw_…9-mP"),
    ("psc" + "ale_oauth_" + fake(40, URLSAFE), "planetscale-token", "pscale_oauth_…9-mP"),
    ("pu" + "l-" + fake(40, HEX), "pulumi-token", "pul-…0c7e"),
    ("da" + "pi" + fake(32, HEX), "databricks-token", "dapi…8264"),
    ("da" + "pi" + fake(32, HEX) + "-2", "databricks-token", "dapi…64-2"),
    ("v1" + ".0-" + fake(24, HEX) + "-" + fake(146, HEX), "cloudflare-origin-ca-key", "v1.0-…643f"),
    ("sha" + "256~" + fake(43, URLSAFE), "openshift-token", "sha256~…P2_q"),
    ("VAULT_TOKEN=" + "hv" + "s." + fake(95, URLSAFE), "vault-token", "hvs.…fG1h"),
    ("hv" + "b." + fake(150, URLSAFE), "vault-token", "hvb.…7vL4"),
    ("op" + "s_eyJ" + fake(300, BASE64), "1password-token", "ops_…G1hJ"),
    ("A3" + "-" + fake(6, UPPER) + "-" + fake(11, UPPER) + ("-" + fake(5, UPPER)) * 3, "1password-secret-key", "A3-…7XQ9"),
    ("AGE-SECRET" + "-KEY-1" + fake(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"), "age-secret-key", "AGE-SECRET-KEY-1…KHCE"),
    ("p8" + "e-" + fake(32), "adobe-client-secret", "p8e-…Y0zA"),
    ("gl" + "c_" + fake(40, BASE64) + "==", "grafana-token", "glc_…mP=="),
    ("gl" + "sa_" + fake(32) + "_" + fake(8, HEX), "grafana-token", "glsa_…0c7e"),
    ("ey" + "JrIjoi" + fake(80), "grafana-token", "eyJrIjoi…nT8w"),
    ("NR" + "AK-" + fake(27, UPPER), "newrelic-key", "NRAK-…2M4T"),
    ("NR" + "II-" + fake(32, URLSAFE.replace("_", "")), "newrelic-key", "NRII-…sY0z"),
    ("sn" + "trys_eyJ" + fake(60, BASE64) + "_" + fake(43, BASE64), "sentry-token", "sntrys_…P2/q"),
    ("sn" + "tryu_" + fake(64, HEX), "sentry-token", "sntryu_…8264"),
    ("dt" + "0c01." + fake(24) + "." + fake(64), "dynatrace-token", "dt0c01.…Y0zA"),
    ("4b" + "1d" + fake(38), "clickhouse-key", "4b1d…9mP2"),
    ("ic" + "o-" + fake(32), "infracost-token", "ico-…Y0zA"),
    ("pn" + "u_" + fake(36), "prefect-key", "pnu_…Xk9m"),
    ("sm" + "_pat_" + fake(16), "settlemint-token", "sm_pat_…nT8w"),
    ("MAILCHIMP_KEY=" + fake(32, HEX) + "-us" + "14", "mailchimp-key", "…us14"),
    ("client_secret: " + "Qt" + "T8Q~" + fake(34, "7Zq~pR2-Lm9_xV4.nT8wK3cD6fG1hJ5sY0"), "azure-client-secret", "…5sY0"),
    (fake(6) + "_" + fake(29) + "_mm" + "k", "maxmind-key", "…_mmk"),
    (fake(14) + ".atlas" + "v1." + fake(64, URLSAFE), "terraform-token", "…hJ5s"),
    ("https://api.telegram.org/bot" + "123456789" + ":A" + "A" + fake(33, URLSAFE) + "/getMe", "telegram-bot-token", "A…sY0z"),
    ("https://hooks.slack" + ".com/services/" + "T0DCUJB1Q/B0DD08H5G/" + fake(24), "slack-webhook", "…6fG1"),
    ("https://hooks.slack" + ".com/workflows/" + "T016M3G1GHZ/A04J3BAF7AA/442660231806210747/" + fake(24), "slack-webhook", "…6fG1"),
    ("https://discord" + ".com/api/webhooks/" + "123456789012345678/" + fake(68, URLSAFE), "discord-webhook", "…Y0zA"),
    ("https://discordapp" + ".com/api/webhooks/" + "123456789012345678/" + fake(68, URLSAFE), "discord-webhook", "…Y0zA"),
    ("https://acme.webhook" + ".office.com/webhookb2/" + UUID + "@" + UUID + "/IncomingWebhook/" + fake(32, HEX) + "/" + UUID, "teams-webhook", "…4a59"),
]

PROSE_POSITIVES = [
    # A secret word, up to a few fillers ("is", "was set to", ":"), then a value that looks
    # generated; `pwd: …` is an assignment, and that rule claims it first.
    ("with password " + PROSE_SECRET, "secret-in-prose", "…dX9q"),
    ("The password is " + PROSE_SECRET + ".", "secret-in-prose", "…dX9q"),
    ("the passphrase is " + "hunter2-" + "Kq8vZ3xW", "secret-in-prose", "…Z3xW"),
    ("passphrase " + "hunter2-" + "Kq8vZ3xW", "secret-in-prose", "…Z3xW"),
    ("The password was set to " + PROSE_SECRET, "secret-in-prose", "…dX9q"),
    ("the password has been changed to `" + PROSE_SECRET + "` today", "secret-in-prose", "…dX9q"),
    ("**Password:** " + PROSE_SECRET, "secret-in-prose", "…dX9q"),
    ("mysql -u root --password " + PROSE_SECRET, "secret-in-prose", "…dX9q"),
    ("The password is " + "Summer2024" + "Welcome!", "secret-in-prose", "…ome!"),
    ("the API key is " + GENERIC, "secret-in-prose", "…nT8w"),
    ('the token is "' + GENERIC + '"', "secret-in-prose", "…nT8w"),
    ("pwd: " + PROSE_SECRET, "secret-assignment", "…dX9q"),
]


POSITIVES = [
    # (text, kind, preview)
    ("key " + AKIA + " in prose", "aws-access-key-id", "AKIA…2E4Q"),
    ("AS" + "IA" + "Z9Y8" * 4, "aws-access-key-id", "ASIA…Z9Y8"),
    ("aws_secret_access_key = " + AWS_SECRET, "aws-secret-access-key", "…Ab3/"),
    ("AWS_SECRET_ACCESS_KEY=" + AWS_SECRET, "aws-secret-access-key", "…Ab3/"),
    ('{"SecretAccessKey": "' + AWS_SECRET + '"}', "aws-secret-access-key", "…Ab3/"),
    ("export GITHUB_TOKEN=" + GH, "github-token", "ghp_…a1B2"),
    ("gh" + "o_" + "Zz09" * 9, "github-token", "gho_…Zz09"),
    ("gh" + "u_" + "Zz09" * 9, "github-token", "ghu_…Zz09"),
    ("gh" + "s_" + "Zz09" * 9, "github-token", "ghs_…Zz09"),
    ("gh" + "r_" + "Zz09" * 9, "github-token", "ghr_…Zz09"),
    ("github" + "_pat_" + "11ABCDEFG0" + "_" + "x9Y8" * 15, "github-token", "github_pat_…x9Y8"),
    ("gl" + "pat-" + "x1Y2z3" * 4, "gitlab-token", "glpat-…Y2z3"),
    ("xo" + "xb-" + "123456789012-1234567890123-" + "AbCd" * 6, "slack-token", "xoxb-…AbCd"),
    ("xo" + "xp-" + "123456789012-1234567890123-" + "AbCd" * 6, "slack-token", "xoxp-…AbCd"),
    ("xa" + "pp-" + "1-A0123456789-1234567890123-" + "ab12" * 8, "slack-token", "xapp-…ab12"),
    ("sk" + "_live_" + "4eC39Hq" * 4, "stripe-key", "sk_live_…39Hq"),
    ("rk" + "_live_" + "4eC39Hq" * 4, "stripe-key", "rk_live_…39Hq"),
    ("OPENAI_API_KEY=" + "sk" + "-" + "Ab1" * 16, "openai-key", "sk-…1Ab1"),
    ("sk" + "-proj-" + "Ab1_" * 10 + "Cd2-" * 10, "openai-key", "sk-proj-…Cd2-"),
    ("sk" + "-ant-" + "api03-" + "Ab1-" * 20 + "AA", "anthropic-key", "sk-ant-…1-AA"),
    ("AI" + "za" + "Sy" + "A1b2C3d4E5" * 3 + "f6g", "google-api-key", "AIza…5f6g"),
    ("Cookie: session=" + JWT, "jwt", "eyJ…dXJl"),
    (pem("RSA"), "private-key", "BEGIN RSA PRIVATE KEY…"),
    (pem("OPENSSH"), "private-key", "BEGIN OPENSSH PRIVATE KEY…"),
    (pem("EC"), "private-key", "BEGIN EC PRIVATE KEY…"),
    (pem("ENCRYPTED"), "private-key", "BEGIN ENCRYPTED PRIVATE KEY…"),
    ('{"private_key": "' + pem("RSA", newline="\\n") + '\\n"}', "private-key", "BEGIN RSA PRIVATE KEY…"),
    (pem("RSA").rsplit("\n", 1)[0], "private-key", "BEGIN RSA PRIVATE KEY…"),  # truncated paste
    ("dp" + ".st." + "dev." + "Ab1" * 14, "doppler-token", "dp.st.…1Ab1"),
    ("dp" + ".pt." + "Ab1" * 14 + "C", "doppler-token", "dp.pt.…Ab1C"),
    ("np" + "m_" + "Ab1" * 12, "npm-token", "npm_…1Ab1"),
    ('password = "' + GENERIC + '"', "secret-assignment", "…nT8w"),
    ("secret: " + GENERIC, "secret-assignment", "…nT8w"),
    ("api_key = '" + GENERIC + "'", "secret-assignment", "…nT8w"),
    ("token: " + GENERIC, "secret-assignment", "…nT8w"),
    ("DB_PASSWORD=" + GENERIC, "secret-assignment", "…nT8w"),
    ('{"client_secret": "' + GENERIC + '"}', "secret-assignment", "…nT8w"),
    ("mysql --password=" + GENERIC + " -u app", "secret-assignment", "…nT8w"),
    ("TOKEN => " + GENERIC, "secret-assignment", "…nT8w"),
    ('token: "550e8400-e29b-41d4-a716-446655440000"', "secret-assignment", "…0000"),
    ("Authorization: Bearer " + GENERIC + "Z5", "bearer-token", "…8wZ5"),
    ("git clone https://deploy:" + "hunter2x7" + "@git.example.org/r.git", "url-credentials", "…"),
    ("postgres://app:" + "S3cr3tPw9" + "@db:5432/app", "url-credentials", "…"),
    ("https://user:" + "pass" + "@host", "url-credentials", "…"),
] + PROVIDER_POSITIVES + PROSE_POSITIVES


@pytest.mark.parametrize(("text", "kind", "preview"), POSITIVES)
def test_each_kind_is_found(text: str, kind: str, preview: str) -> None:
    assert find_secrets(text) == [(1, kind, preview)]


@pytest.mark.parametrize(("text", "kind", "preview"), POSITIVES)
def test_each_kind_is_redacted_and_redaction_is_idempotent(
    text: str, kind: str, preview: str
) -> None:
    once = redact(text)
    assert "[REDACTED:" + kind + "]" in once
    assert redact(once) == once
    assert find_secrets(once) == []


@pytest.mark.parametrize(
    "text",
    [
        "We rotate the API token every quarter; the password policy lives in the wiki.",
        "Tokens expire after 30 days. Ask Teodor for the secret-management runbook.",
        "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b (see 3f78685).",
        "sha: 3f786850e387550fdab836ed7e6dc881de23001b",
        "request id 550e8400-e29b-41d4-a716-446655440000 failed",
        "id: 550e8400-e29b-41d4-a716-446655440000",
        "password: <see 1Password>",
        "password: see 1Password, item 'staging db'",
        "password: xxx",
        "password: xxxxxxxxxxxxxxxxxxxx",
        "password: ********",
        "token: <token>",
        "api_key = ${API_KEY}",
        "api_key = $API_KEY_FROM_ENV_2024",
        "token: {{ .Values.githubToken9 }}",
        "secret: changeme",
        'password = "changeme123456"',
        "API_KEY=your_api_key_here_1234",
        "password: hunter2",
        "password: abc123abc123abc1",
        'token = os.environ["GITHUB_TOKEN"]',
        "password = process.env.DB_PASSWORD",
        "password = settings.DATABASE_PASSWORD_2024",
        "max_tokens: 4096",
        "token_count = 123456789012345",
        "secret_name: prod-db-credentials-2024",
        "tokenizer_path: /models/tok-v2-2024.json",
        "credentials_file: ~/.aws/credentials2024x",
        "password: correct-horse-battery-staple",
        "see docs/api-key-rotation-policy.md",
        "the password is: not written here",
        "Use scikit-learn and task-sk-" + "a" * 40 + " ids",
        "gh" + "p_short",
        "AK" + "IA" + "IOSFODNN7" + "EXAMPLE",
        "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
        "dp" + ".st.dev",
        "eyJ" + "hbGciOi",
        "-" * 5 + "BEGIN PUBLIC KEY" + "-" * 5 + "\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n" + "-" * 5
        + "END PUBLIC KEY" + "-" * 5,
        "-" * 5 + "BEGIN CERTIFICATE" + "-" * 5 + "\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq\n",
        "the file starts with " + "-" * 5 + "BEGIN OPENSSH PRIV" + "ATE KEY" + "-" * 5 + ".",
        pem("RSA", body="..."),
        "https://example.com/a:b@c",
        "git@github.com:org/repo.git and ssh://git@github.com/org/repo",
        "https://user@host.example.com/path",
        "https://user:${PASSWORD}@host",
        "https://user:<password>@host",
        "https://user:password@host",
        "postgres://postgres:postgres@localhost:5432/dev",
        "mail bob@example.com or mailto:alice@example.org",
        "Bearer tokens are sent in the Authorization header.",
    ],
)
def test_not_secrets(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == text


NEAR_MISSES = [
    # A format's near miss: too short or long, the wrong alphabet, inside a longer token, a
    # placeholder, or an identifier that shares the prefix.
    "gh" + "p_" + "x" * 36,  # placeholder
    "sk" + "-or-v1-" + fake(40, HEX),  # too short
    "hf" + "_" + fake(20),
    "hf" + "_" + "x" * 34,  # placeholder
    "my" + "hf_" + fake(34),  # inside a longer token
    "api" + "_org_" + fake(33),
    "gs" + "k_" + fake(51),
    "r8" + "_" + fake(36),
    "pp" + "lx-" + fake(47),
    "model xa" + "i-grok-2-latest",
    "gl" + "rt-" + fake(12),
    "gl" + "ptt-" + fake(40),  # not hex
    "py" + "pi-AgEIcHlwaS5vcmc" + fake(20),
    "ruby" + "gems_" + fake(47, HEX),
    "dc" + "kr_pat_" + fake(20),
    "sg" + "p_" + fake(39, HEX),
    "pa" + "t." + fake(22) + "." + fake(24),
    "pa" + "th" + fake(14) + "." + fake(64, HEX),  # `pat` inside a word
    "xo" + "xd-" + fake(40),
    "lin" + "_api_" + fake(39),
    "nt" + "n_" + fake(46),  # no leading digits
    "client" + "_secret_" + fake(43),  # `secret_` inside a name
    "AT" + "ATT3" + fake(100),
    "PM" + "AK-" + fake(24, HEX) + "-" + fake(33, HEX),
    "SG" + "." + fake(22) + "." + fake(40),
    "SK" + fake(31, HEX),
    "account sid AC" + fake(32, HEX),  # a Twilio account SID is an identifier
    "xkey" + "sib-" + fake(64, HEX),
    "sk" + "_test_" + "x" * 24,  # placeholder
    "sk" + "_test_" + fake(10),
    "pk" + "_live_" + fake(24),  # publishable: public by design
    "di" + "sk_test_" + fake(24),  # inside a longer name
    "wh" + "sec_" + fake(20),
    "sh" + "pat_" + fake(32),  # not hex
    "sq0" + "csp-" + fake(42),
    "EA" + "AA" + fake(59),
    "EZ" + "AK" + fake(53),
    "FLW" + "SECK_TEST-" + fake(32, HEX) + "-Y",
    "GOC" + "SPX-" + fake(27),
    "ya" + "29." + fake(10),
    "AB" + "IA" + fake(16, LOWER),
    "Account" + "Key=" + fake(40, BASE64) + "==",
    "LT" + "AI" + fake(19),
    "do" + "p_v1_" + fake(63, HEX),
    "do" + "p_v2_" + fake(64, HEX),
    "HR" + "KU-AB" + fake(58),
    "fo" + "1_" + fake(42),
    "fm" + "2_" + fake(40),
    "sb" + "p_" + fake(39, LOWER),
    "psc" + "ale_tkn_" + fake(20),
    "pu" + "l-" + fake(40),  # not hex
    "da" + "pi" + fake(31, HEX),
    "da" + "pi" + fake(32, HEX) + "-12",  # inside a longer token
    "v1" + ".0-" + fake(24, HEX) + "-" + fake(100, HEX),
    "sha" + "256~" + fake(42),
    "hv" + "s." + fake(40),
    "op" + "s_eyJ" + fake(100),
    "A3" + "-" + fake(6, UPPER) + "-" + fake(11, UPPER),
    "AGE-SECRET" + "-KEY-1" + fake(58, LOWER),  # not bech32
    "p8" + "e-" + fake(31),
    "gl" + "sa_" + fake(32) + "_" + fake(8),  # not hex
    "NR" + "AK-" + fake(26),
    "sn" + "tryu_" + fake(63, HEX),
    "dt" + "0c01." + fake(24) + "." + fake(60),
    "4b" + "1d" + fake(37),
    "sha1 " + fake(20, HEX) + "4b" + "1d" + fake(38),  # inside a longer run
    "ic" + "o-" + fake(31),
    "ico-arrow-left ico-arrow-right",
    "pn" + "u_" + fake(35),
    "sm" + "_pat_" + fake(15),
    fake(31, HEX) + "-us" + "14",  # a hex digest too short for Mailchimp
    "sha256 " + fake(64, HEX) + "-us" + "1",  # the end of a longer digest
    "x" + fake(6) + "_" + fake(29) + "_mm" + "k",  # inside a longer token
    "locale en-us1 and en-us",
    "value " + "Qt" + "T8Q~" + fake(20),  # too short
    fake(6) + "_" + fake(28) + "_mm" + "k",
    fake(13) + ".atlas" + "v1." + fake(64, URLSAFE),
    "at 12:" + "A" + fake(34),  # too few digits for a bot id
    "bot 123456789:" + "A" + fake(33),  # one short
    "https://hooks.slack" + ".com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "https://hooks.slack" + ".com/services/" + fake(20),
    "https://discord" + ".com/api/webhooks/" + "1234/" + fake(68, URLSAFE),
    "https://notdiscord" + ".com/api/webhooks/" + "123456789012345678/" + fake(68, URLSAFE),
    "https://acme.webhook" + ".office.com/webhookb2/" + fake(40),
]

PROSE_NEGATIVES = [
    # Ordinary prose around secret words: no value, or one that is a word, a number or a name.
    "Fix the password reset flow before Friday.",
    "The token budget of 4000 is enough.",
    "A password is required for the admin page.",
    "The token is passed to AuthProvider2Client.",
    "The api key of ServiceAccount2Handler is rotated by the CronJob.",
    "Keep the secret of OAuth2ClientFactory out of the logs.",
    "Max tokens set to 128000.",
    "pwd is myProject2024dir",
    "The token count is 1234567890123456.",
    "The secret is in https://vault.example.com/ui/kv2",
    "Credentials are in ~/.aws/credentials2024x",
    "The password is correct-horse-battery-staple.",
    "Token refresh happens every 3600s.",
    "Use --password-file /run/secrets/db2024pass instead.",
    "Password hashing uses bcrypt2b12rounds.",
    "The token is stored in ~/.config/app2024/token.json.",
    "The API key for utf8mb4_unicode_ci2 tables is unused.",
    "The password is in 1Password under 'staging db'.",
    "The password is ********.",
    "the password is <redacted>",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_of_each_format_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize("text", PROSE_NEGATIVES)
def test_prose_about_secrets_without_one_is_kept(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == text


def test_base64_image_is_not_a_secret() -> None:
    blob = base64.b64encode(random.Random(0).randbytes(200_000)).decode()
    for text in (
        "![shot](data:image/png;base64," + blob + ")",
        '{"type": "image", "source": {"type": "base64", "data": "' + blob + '"}}',
        "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76)),
    ):
        assert find_secrets(text) == []


def test_base64_blob_in_an_assignment_is_a_secret() -> None:
    blob = base64.b64encode(random.Random(1).randbytes(48)).decode()
    assert find_secrets("secret_key = " + blob) == [(1, "secret-assignment", "…" + blob[-4:])]


def test_line_numbers_and_order() -> None:
    text = "\n".join(
        [
            "# Deploy notes",
            "export GITHUB_TOKEN=" + GH,
            "",
            "aws_access_key_id = " + AKIA,
            "aws_secret_access_key = " + AWS_SECRET,
            "db: postgres://app:" + "S3cr3tPw9" + "@db/app and token: " + GENERIC,
            pem("EC"),
            "done",
        ]
    )
    assert find_secrets(text) == [
        (2, "github-token", "ghp_…a1B2"),
        (4, "aws-access-key-id", "AKIA…2E4Q"),
        (5, "aws-secret-access-key", "…Ab3/"),
        (6, "url-credentials", "…"),
        (6, "secret-assignment", "…nT8w"),
        (7, "private-key", "BEGIN EC PRIVATE KEY…"),
    ]


def test_redact_exact_output() -> None:
    text = "\n".join(
        [
            "[default]",
            "aws_access_key_id = " + AKIA,
            "aws_secret_access_key = " + AWS_SECRET,
            'password = "' + GENERIC + '"',
            "Set token=" + GENERIC + ".",
            "remote: https://deploy:" + "hunter2x7" + "@git.example.org/r.git",
            "export GITHUB_TOKEN=" + GH + "  # rotated monthly",
            "Authorization: Bearer " + GENERIC + "Z5",
            "key:",
            pem("RSA"),
            "after",
        ]
    )
    assert redact(text) == "\n".join(
        [
            "[default]",
            "aws_access_key_id = [REDACTED:aws-access-key-id]",
            "aws_secret_access_key = [REDACTED:aws-secret-access-key]",
            'password = "[REDACTED:secret-assignment]"',
            "Set token=[REDACTED:secret-assignment].",
            "remote: https://deploy:[REDACTED:url-credentials]@git.example.org/r.git",
            "export GITHUB_TOKEN=[REDACTED:github-token]  # rotated monthly",
            "Authorization: Bearer [REDACTED:bearer-token]",
            "key:",
            "[REDACTED:private-key]",
            "after",
        ]
    )
    assert redact(redact(text)) == redact(text)


def test_specific_kind_wins_over_generic_assignment() -> None:
    text = "password = " + GH + "\napi_key: sk" + "-ant-" + "Ab1-" * 20
    assert [kind for _line, kind, _p in find_secrets(text)] == ["github-token", "anthropic-key"]
    assert redact(text) == "password = [REDACTED:github-token]\napi_key: [REDACTED:anthropic-key]"


def test_token_inside_url_credentials_is_the_token() -> None:
    text = "https://x-access-token:" + GH + "@github.com/org/repo.git"
    assert find_secrets(text) == [(1, "github-token", "ghp_…a1B2")]
    assert redact(text) == "https://x-access-token:[REDACTED:github-token]@github.com/org/repo.git"


def test_redaction_keeps_the_names_around_a_secret() -> None:
    """A webhook keeps its host, a connection string its keys, a bot token its bot id, and a
    sentence its full stop."""
    slack = "https://hooks.slack" + ".com/services/"
    discord = "https://discord" + ".com/api/webhooks/"
    azure = "DefaultEndpointsProtocol=https;AccountName=acme;Account" + "Key="
    bot = "https://api.telegram.org/bot123456789:"
    text = "\n".join(
        [
            "notify " + slack + "T0DCUJB1Q/B0DD08H5G/" + fake(24) + " on failure",
            "or " + discord + "123456789012345678/" + fake(68, URLSAFE) + ".",
            azure + fake(86, BASE64) + "==;EndpointSuffix=core.windows.net",
            bot + "A" + "A" + fake(33, URLSAFE) + "/getMe",
            "Cookie: _gitlab" + "_session=" + fake(32, LOWER) + "; path=/",
            "DATABASE_PASSWORD is " + "psc" + "ale_pw_" + fake(40, URLSAFE) + ".",
        ]
    )
    assert redact(text) == "\n".join(
        [
            "notify " + slack + "[REDACTED:slack-webhook] on failure",
            "or " + discord + "[REDACTED:discord-webhook].",
            azure + "[REDACTED:azure-storage-key];EndpointSuffix=core.windows.net",
            bot + "[REDACTED:telegram-bot-token]/getMe",
            "Cookie: _gitlab_session=[REDACTED:gitlab-token]; path=/",
            "DATABASE_PASSWORD is [REDACTED:planetscale-token].",
        ]
    )


def test_prose_secret_in_a_message() -> None:
    """The issue's case: an assistant message naming a password in passing."""
    text = "I created the staging user with password " + PROSE_SECRET + " and a read-only role."
    assert find_secrets(text) == [(1, "secret-in-prose", "…dX9q")]
    assert redact(text) == (
        "I created the staging user with password [REDACTED:secret-in-prose] and a read-only role."
    )


# --- the allow marker ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "export GITHUB_TOKEN=" + GH + "  # " + ALLOW_MARKER,
        "token: " + GENERIC + " <!-- " + ALLOW_MARKER + " -->",
        "<!-- " + ALLOW_MARKER + " --> example: " + AKIA + " and " + JWT,
        "// " + ALLOW_MARKER + ": test fixture https://u:" + "p4ssw0rd9" + "@h",
    ],
)
def test_allow_marker_on_the_line(line: str) -> None:
    assert ALLOW_MARKER == "memrepo: allow-secret"
    text = "before\n" + line + "\nafter"
    assert find_secrets(text) == []
    assert redact(text) == text


def test_allow_marker_protects_only_its_own_line() -> None:
    text = "# " + ALLOW_MARKER + "\nexport GITHUB_TOKEN=" + GH + "\nok " + GH + " # " + ALLOW_MARKER
    assert find_secrets(text) == [(2, "github-token", "ghp_…a1B2")]
    assert redact(text) == (
        "# " + ALLOW_MARKER + "\nexport GITHUB_TOKEN=[REDACTED:github-token]\nok " + GH + " # "
        + ALLOW_MARKER
    )


def test_allow_marker_on_a_private_key_begin_line_covers_the_block() -> None:
    body = "\n".join([GH, GH, "QUJD" * 16])  # tokens inside an allowed block stay unreported
    block = pem("RSA", body=body).replace("KEY-----\n", "KEY----- " + ALLOW_MARKER + "\n", 1)
    assert find_secrets(block) == []
    assert redact(block) == block


# --- helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", 0.0),
        ("aaaa", 0.0),
        ("ab", 1.0),
        ("abcd", 2.0),
        ("0123456789abcdef", 4.0),
    ],
)
def test_shannon_entropy(value: str, expected: float) -> None:
    assert shannon_entropy(value) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (GENERIC, True),
        ("s3cr3tP4ssw0rd!", True),
        ("abc123abc123abc1", False),  # repetitive: low entropy
        ("user_2024_backup_password", False),  # words and a year
        ("Xk9mP2q", False),  # short
        ("/home/user/proj2024x", False),
        ("<" + GENERIC + ">", False),
    ],
)
def test_looks_random(value: str, expected: bool) -> None:
    assert looks_random(value) is expected


# --- linear time --------------------------------------------------------------------------

MB = 1024 * 1024


@pytest.mark.parametrize(
    "name",
    [
        "sk-",
        "eyJ",
        "password=",
        "pwdpwdpwd",
        "https://",
        "a://a:",
        "-----",
        "BEGIN",
        "dp.st.",
        "xoxb-",
        "dense-findings",
        "base64",
        "long-line",
        "with password",
        "fillers",
        "quoted-prose",
        "bot-id",
        "mailchimp-lead",
        "azure-lead",
        "webhook",
        "AccountKey=",
        "glc_",
        "xoxd-",
    ],
)
def test_linear_time_on_adversarial_megabyte(name: str) -> None:
    begin = "-" * 5 + "BEGIN RSA PRIV" + "ATE KEY" + "-" * 5 + "\n"
    pieces = {
        "sk-": "sk-",
        "eyJ": "eyJ",
        "password=": "password=",
        "pwdpwdpwd": "pwd" * 13 + " ",
        "https://": "https://",
        "a://a:": "a://" + "u" * 100 + ":" + "p" * 200,
        "-----": "-",
        "BEGIN": begin,
        "dp.st.": "dp.st.",
        "xoxb-": "xoxb-",
        "dense-findings": "token: " + GENERIC + "\n",
        "base64": base64.b64encode(random.Random(2).randbytes(3 * MB // 4)).decode(),
        "long-line": "aws_secret_access_key=" + "A" * 39 + " ",
        "with password": "with password " + PROSE_SECRET + " ",
        "fillers": "password is is is is is is set to ",
        "quoted-prose": 'the token is "' + "a" * 600,
        "bot-id": "12345:A",
        "mailchimp-lead": fake(32, HEX) + "-us",
        "azure-lead": "ab1Q~",
        "webhook": "hooks.slack" + ".com/services/T" + "A/" * 100,
        "AccountKey=": "Account" + "Key=",
        "glc_": "gl" + "c_" + "A" * 500,
        "xoxd-": "xo" + "xd-" + "a" * 2000,
    }
    piece = pieces[name]
    small, large = MB // 8, MB // 2
    text = (piece * (large // len(piece) + 1))[:large]
    for scan in (find_secrets, redact):
        # Linear means four times the text costs about four times the work; quadratic costs
        # sixteen. CPU time of this process (not wall time: a loaded machine must not fail it),
        # best of a few runs, compared between sizes rather than against a bound in seconds.
        ratio = _cpu(scan, text[:large]) / max(_cpu(scan, text[:small]), 1e-3)
        assert ratio < 8.0, (scan.__name__, round(ratio, 2))


def _cpu(scan: object, text: str, runs: int = 3) -> float:
    """The least CPU time of `runs` calls of scan(text)."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        scan(text)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize(("text", "expected"), [
    # A password may hold `&`; the next `name=` of a query string is not part of it (issue 38).
    ("DB_PASSWORD=" + "Fa4e&Pw0rd&" + "Zq9!Zq9!", "DB_PASSWORD=[REDACTED:secret-assignment]"),
    ("GET /login?password=" + GENERIC + "&user=bob", "GET /login?password=[REDACTED:secret-assignment]&user=bob"),
    ("the password is " + "Tr0ub4dor&3x!" + " now", "the password is [REDACTED:secret-in-prose] now"),
])
def test_a_password_holding_an_ampersand(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "password = config.DATABASE_PASSWORD_2024",
    "password: Summer-Holidays",  # a word pair: no three kinds of character
])
def test_a_password_word_before_a_name_or_words_is_kept(text: str) -> None:
    assert find_secrets(text) == []


PATTERNS = """
import sys
from memrepo.format import redact
redact.find_secrets(sys.stdin.read())
print(" ".join(name for name in ("_ASSIGNMENT", "_PROSE", "_BEARER", "_URL_CREDENTIALS", "_PEM_MARKER")
               if getattr(redact, name) in redact._COMPILED))
"""


@pytest.mark.parametrize("text, compiled", [
    ("Deploys are frozen on Fridays after 16:00; ask in #ops.\n", ""),
    ("The API token lives in the vault, ask Ana.\n", "_ASSIGNMENT _PROSE"),
    ("Clone over https://git.example.org/team/repo.git\n", "_URL_CREDENTIALS"),
    ("curl -H 'Authorization: Bearer $T'\n", "_BEARER"),
    ("-----BEGIN CERTIFICATE-----\n", "_PEM_MARKER"),
])
def test_a_pattern_is_compiled_only_for_a_text_holding_its_literal(text: str, compiled: str) -> None:
    # Compiling every pattern cost an ordinary add ~2 ms (issue 44); what is found stays the same
    # (test_redact_corpus.py holds every finding of the labeled corpus).
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", PATTERNS], input=text, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == compiled


def test_every_literal_of_a_token_format_is_a_string_its_prefix_matches() -> None:
    """`token_formats._needles` reads a prefix by hand (a regex there cost every process that
    imports the formats ~5 M instructions, issue 44): the same literals as the regex reading."""
    import re

    from memrepo.format import token_formats

    def by_regex(prefix: str) -> tuple[str, ...]:
        out = [""]
        for m in re.finditer(r"\\(.)|\[([^\]]*)\]|(.)", prefix):
            escaped, chars, char = m.groups()
            out = [o + c for o in out for c in (chars if chars is not None else escaped or char)]
        return tuple(out)

    prefixes = [prefix for _kind, prefix, _rest, _keep in token_formats.TOKEN_PATTERNS]
    assert [token_formats._needles(p) for p in prefixes] == [by_regex(p) for p in prefixes]
    assert token_formats._needles("gh[pousr]_") == ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
    assert token_formats._needles(r"dt0c01\.") == ("dt0c01.",)
    assert all(re.fullmatch(p, n) for p in prefixes for n in token_formats._needles(p))


LOADED = """
import sys
from memrepo.format import redact
redact.find_secrets(sys.stdin.read())
print("bisect" in sys.modules, redact._C_LOG2_C is not None)
"""


@pytest.mark.parametrize("text, loaded", [
    ("Deploys are frozen on Fridays after 16:00; ask in #ops.\n", "False False"),
    ("The API token is Xk9mQ2vR7pL4wN8t, ask Ana.\n", "True True"),
])
def test_an_ordinary_text_loads_no_bisect_and_builds_no_entropy_table(text: str, loaded: str) -> None:
    # Both cost every process that imported redact ~1.5 M instructions (issue 44); a text with
    # a candidate needs them.
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-I", "-c", LOADED], input=text, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == loaded
