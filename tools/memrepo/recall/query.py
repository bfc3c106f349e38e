"""Prompt -> search terms, or silence (stdlib only: runs before every prompt).

A prompt is reduced to the user's own words (code, traces, logs, URLs and blobs removed),
split the way FTS5's unicode61 tokenizer splits, and stripped of stopwords and filler in
English and Portuguese. A prompt with no subject left gets no terms: silence is decided by
the filler lexicon, never by length.
"""

from memrepo.recall import porter
from memrepo.recall.clean import MAX_INPUT_CHARS, clean_prompt, tokenize

__all__ = ["MAX_TERMS", "Query", "build_query", "clean_prompt", "is_filler", "subject_terms", "tokenize"]

MAX_TERMS = 24

_EN_STOP = """
a about above after again against all almost also although always am among an and another
any anybody anyone anything anyway anywhere are aren around as at away back be because been
before being below between both but by can cannot could couldn did didn do does doesn doing
don done down during each either else enough even ever every everything few for from further
had hadn has hasn have haven having he her here hers herself him himself his how however i if
in into is isn it its itself just least less let lets ll many may maybe me might mine more
most much must mustn my myself neither never no nor not now of off often on once one ones only
onto or other others otherwise our ours ourselves out over own per perhaps quite rather re
really same shall shan she should shouldn since so some somebody someone something somehow
sometimes somewhere still such than that thats the their theirs them themselves then there
theres these they this those though through thus till to too toward towards under until up
upon us ve very via was wasn we were weren what whatever whats when whenever where wherever
whether which while who whoever whole whom whose why will with within without won would
wouldn yet you your yours yourself yourselves im ive id youre youve theyre dont doesnt didnt
cant wont isnt arent wasnt shouldnt wouldnt couldnt hows whys wheres heres tho
"""
# Acknowledgements, directions, reactions and verbs that carry no subject of their own.
_EN_FILLER = """
ok okay okey kk yes yeah yea yep yup sure nope nah naw thanks thank thx tx ty tysm cheers
great good nice cool perfect awesome amazing excellent fantastic brilliant lovely wonderful
sweet neat fine alright right correct exactly indeed agreed true false wrong lgtm sgtm
shipit go ahead continue proceed carry keep keeps going stop wait hold halt pause hmm hm um
umm uh uhh ugh oh ah ahh aha wow whoa oops lol lmao rofl haha hehe welp meh yay woohoo huh eh
please pls plz sorry btw fyi tbh imo imho idk asap try redo undo make made makes making went
gone get got gets getting give gave put take took tell told say said says ask asked asking
mean meant means think thought guess know knew see saw look looked looks seem seems need
needs needed want wants wanted wanna gonna gotta like likes help thing things stuff bit lot
lots kind sort way ways time times today tonight tomorrow yesterday morning afternoon evening
later soon already actually basically literally simply probably definitely certainly totally
pretty super quick quickly last first next previous different double check checked worked
work works working two instead rest part answer question questions reply idea ideas change
changes changed update updated fix fixed bad better best worse worst well little big small
new old day days week weekend far usually normally typically generally sound sounds sense
mind nvm np worry worries use used using fair catch revert reverted explain happen
happened happens step steps move moving course pleasure set hang sec brb lemme gimme bye cya
night appreciate appreciated deal wish decide interesting understood gotcha point agree
thumbsup
"""
_PT_STOP = """
o os um uma uns umas de do da dos das na nas em num numa ao aos pelo pela pelos pelas para
pra pro pros por com sem sob sobre entre ate desde que quem qual quais quando onde como
porque pq ou mas nem se ja tambem muito muita muitos muitas pouco mais menos tao tanto eu tu
ele ela nos vos eles elas voce voces vc vcs te lhe lhes meu minha meus minhas teu tua seu sua
seus suas nosso nossa nossos nossas dele dela deles delas esse essa esses essas este esta
estes estas isso isto aquele aquela aqueles aquelas aquilo aqui ai ali la ca nao sim ser sou
era foi fui sao estar estou estao estava tem tenho tinha ter temos ha havia haver vai vou
vamos ir dar deu dando fazer faz fiz feito faco pode posso podemos poder preciso precisa
precisamos quero queria quer querer deve devo dever acho achei agora ainda depois antes
entao assim tipo coisa coisas algo algum alguma alguns algumas nada tudo todo toda todos
todas cada outro outra outros outras mesmo mesma mesmos mesmas
"""
_PT_FILLER = """
valeu vlw obrigado obrigada obrigadao brigado brigada obg beleza blz bom boa bem otimo otima
legal show massa top perfeito perfeita certo certinho claro exato exatamente pronto
combinado fechado tranquilo tranquila manda ver seguir segue siga continua continuar bora
vamo faca fazendo ta dia semana fim hoje amanha ontem noite tarde manha logo tchau oi ola
opa eita entendi entendido funcionou funciona errado espera perai pera calma volta desfaz
desfazer refaz tenta tentar denovo novamente novo mandar mandou rs rsrs fechou demorou
partiu bala deixa deixe esquece parar ficou demais bola certeza confere conferir verifica
verificar checa checar olha olhar falou tmj explica explique explicar
"""
# A few acknowledgements in other languages, so the commonest ones fall silent too.
_OTHER_FILLER = """
si dale gracias vale bueno perfecto listo merci oui non bien danke ja nein gut bitte grazie
bene
"""
# Acknowledgements whose words are subjects elsewhere ('what plan are we on?').
_FILLER_PHRASES = (" like a plan ", " good job ", " your call ", " ship it ", " roll with it ")
_STOP = frozenset((_EN_STOP + _EN_FILLER + _PT_STOP + _PT_FILLER + _OTHER_FILLER).split())
class Query:
    """Search terms for one prompt, or the reason it gets silence."""

    __slots__ = ("terms", "silent_reason")

    def __init__(self, terms: tuple[str, ...], silent_reason: str | None = None) -> None:
        self.terms = terms
        self.silent_reason = silent_reason

    def __repr__(self) -> str:
        return f"Query(terms={self.terms!r}, silent_reason={self.silent_reason!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Query):
            return NotImplemented
        return (self.terms, self.silent_reason) == (other.terms, other.silent_reason)

    __hash__ = None  # type: ignore[assignment]


def build_query(prompt: str) -> Query:
    """Subject terms of a prompt, or silence with a reason.

    Reasons: 'empty' (blank prompt); 'conversational' (only filler, stopwords, emoji or
    punctuation); 'no-subject' (only code, traces, logs, or tokens too short to search).
    """
    if not isinstance(prompt, str) or not prompt.strip():
        return Query((), "empty")
    tokens = _words(prompt)
    terms = _select(tokens, MAX_TERMS)
    if terms:
        return Query(terms)
    if any(_is_filler(tok) for tok in tokens):
        return Query((), "conversational")
    if tokens or any(ch.isalnum() for ch in prompt[:MAX_INPUT_CHARS]):
        return Query((), "no-subject")
    return Query((), "conversational")


def subject_terms(text: str, limit: int = MAX_TERMS) -> tuple[str, ...]:
    """Subject terms of any text (e.g. the previous turn), by build_query's pipeline."""
    if not isinstance(text, str):
        return ()
    return _select(_words(text), limit)


def _words(text: str) -> list[str]:
    """Tokens of the cleaned text; filler phrases in short prompts collapse to 'ok'."""
    tokens = tokenize(clean_prompt(text))
    if len(tokens) > 12:
        return tokens
    padded = f" {' '.join(tokens)} "
    for phrase in _FILLER_PHRASES:
        padded = padded.replace(phrase, " ok ")
    return padded.split()


def _select(tokens: list[str], limit: int) -> tuple[str, ...]:
    """The first `limit` subject tokens, one per index term: words FTS5's porter stemmer folds
    together ("refund", "refunds") are one vote, under the first spelling (issue 17)."""
    seen: dict[str, None] = {}
    stems: set[str] = set()
    for tok in tokens:
        if not 1 < len(tok) <= 64 or tok in seen or (tok.isdigit() and len(tok) < 3):
            continue
        if _is_filler(tok):
            continue
        key = porter.stem(tok)
        if key in stems:
            continue
        stems.add(key)
        seen[tok] = None
        if len(seen) >= limit:
            break
    return tuple(seen)


def _is_filler(tok: str) -> bool:
    if tok in _STOP:
        return True
    if len(tok) < 3 or not tok.isalpha():
        return False
    # Laughs and stretched words: 'hahaha', 'kkkkk', 'rsrsrs', 'hmmmm', 'yesss', 'cooool'.
    if len(tok) >= 4 and any(not tok.strip(chars) for chars in ("ha", "he", "k", "rs")):
        return True
    once = _squeeze(tok, 1)
    return once != tok and (once in _STOP or _squeeze(tok, 2) in _STOP)


is_filler = _is_filler  # a stopword, filler or stretched laugh: never a subject


def _squeeze(tok: str, keep: int) -> str:
    """Shorten every run of three or more equal letters to `keep` letters."""
    out: list[str] = []
    run = 0
    for i, ch in enumerate(tok):
        run = run + 1 if i and tok[i - 1] == ch else 1
        if i + 1 == len(tok) or tok[i + 1] != ch:
            out.append(ch * (keep if run >= 3 else run))
    return "".join(out)
