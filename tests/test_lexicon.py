"""The everyday-word lexicon: its shape, what it holds, what it leaves out, and its import cost."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from memrepo.recall.lexicon import COMMON

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EVERYDAY = """
pull pulls pulled pulling write open set setup usual stuff nicer simple phone month nothing
section build helping known every issue issues thing way work working example version value
line page data user app project help question problem quick faster better code file
function error bug fix test run change add update new old today tomorrow week morning people
house table screen button click download upload picture
coisa vez dia semana mes hora pessoa texto mensagem nome tela botao fazer faz fiz mudar
editar enviar colocar pegar puxar rodar arquivo erro codigo pasta ajuda agora depois
""".split()

SPECIFIC = """
git docker postgres sql css html json regex python react api oauth token deploy migration
staging production prod database cache queue webhook dns cdn ssl tls cron backup invoice
payment payout refund schema branch merge commit rebase cluster server container endpoint
timeout latency lambda bucket secret password key login email sms push notification crash
release rollback review approval linkedin instagram whatsapp figma sentry worktree masonry
tokenizer doppler alembic celery webp cloudflare ios android csv kubernetes nginx redis
mysql sqlite graphql typescript javascript npm pip pytest webpack vite stripe slack jira
github gitlab aws gcp azure terraform ansible jwt http https ssh url uri utf unicode ascii
yaml toml markdown latex pdf png svg jpeg ai llm gpt claude anthropic openai embedding
vector kafka rabbitmq grpc websocket cors csrf xss mutex thread async await
producao servidor senha banco nuvem
""".split()


def test_size_and_shape() -> None:
    assert 1500 <= len(COMMON) <= 3200, len(COMMON)
    bad = sorted(w for w in COMMON if len(w) < 2 or not re.fullmatch(r"[a-z0-9]+", w))
    assert not bad, bad


def test_everyday_words_are_common() -> None:
    assert len(EVERYDAY) >= 60
    missing = [w for w in EVERYDAY if w not in COMMON]
    assert not missing, missing


def test_specific_words_are_not_common() -> None:
    assert len(SPECIFIC) >= 80
    present = [w for w in SPECIFIC if w in COMMON]
    assert not present, present


def test_module_has_no_imports() -> None:
    import memrepo.recall.lexicon as lexicon

    with open(lexicon.__file__, encoding="utf-8") as fh:
        source = fh.read()
    assert not re.search(r"^\s*(import|from)\s", source, re.M)


# Counted, not timed (issue 13, item 6): what importing the module allocates, in a fresh
# interpreter (tracemalloc is deterministic). One string of ~19 KB and a small class; the
# frozenset of the same words it replaced is ~3,000 blocks and ~320 KB (and ~1 ms more per prompt).
ALLOCATIONS = """import sys, tracemalloc
sys.path.insert(0, 'tools')
import memrepo.recall
tracemalloc.start()
import memrepo.recall.lexicon
stats = tracemalloc.take_snapshot().statistics('filename')
print(sum(s.count for s in stats), sum(s.size for s in stats))
"""


def test_import_is_cheap() -> None:
    proc = subprocess.run([sys.executable, "-I", "-c", ALLOCATIONS], cwd=ROOT, capture_output=True, text=True, check=True)
    blocks, size = map(int, proc.stdout.split())
    assert blocks < 300 and size < 64 * 1024, (blocks, size)


def test_membership_is_exact_word_match() -> None:
    # The words are kept as one string; membership must still mean "one of the words".
    words = list(COMMON)
    assert len(words) == len(COMMON) and all(w in COMMON for w in words)
    assert "about" in COMMON and "above" in COMMON
    for probe in ("bout", "abou", "about above", " about", "about ", "", "ABOUT", None, 3):
        assert probe not in COMMON, probe
