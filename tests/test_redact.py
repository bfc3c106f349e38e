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
]


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
