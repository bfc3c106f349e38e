"""Prompt -> search terms, or silence (stdlib only: runs before every prompt).

A prompt is split into the user's own words and what they pasted (fenced blocks, traces, log
lines: `clean.split_prompt`); each is split the way FTS5's unicode61 tokenizer splits and
stripped of stopwords and filler in English and Portuguese. Version numbers (`3.12`, `v2.4.1`)
stay whole, as phrases. The own words are the query's terms; pasted words it does not already
hold are its `pasted` terms, which recall weighs less (issue 36). A prompt with no subject left
in either gets no terms: silence is decided by the filler lexicon, never by length.
"""

from memrepo.recall import porter
from memrepo.recall.clean import MAX_INPUT_CHARS, clean_prompt, split_prompt, tokenize

__all__ = ["MAX_TERMS", "Query", "build_query", "clean_prompt", "is_filler", "subject_terms", "tokenize"]

MAX_TERMS = 24
MAX_PASTED_TERMS = 16

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
si dale gracias vale bueno perfecto listo genial claro adelante acuerdo merci oui non bien
danke ja nein gut bitte grazie bene prima mooi top dankjewel bedankt klopt precies fijn
prego parfait super genau
"""
# Function words of the other languages people mix with English subject words (issue 36).
_ES_STOP = """
el la los las un una unos unas del al pero que en con por para sin sobre entre hasta desde
como cuando donde quien cual cuales porque pues ya muy mas menos tambien tampoco no es son
era fue ser estar esta este esto estos estas ese esa eso esos esas lo le les se me te nos mi
mis tu tus su sus yo ella ellos ellas usted ustedes nosotros hay hace hacer tengo tiene tienen
tenemos puedo puede pueden podemos quiero quieres necesito otra otro otros otras todo toda
todos todas algo nada alguien cada mismo asi aqui ahora luego despues antes siempre nunca vez
cosa cosas favor hola otra vez sigue pasa estoy estamos ver dime
"""
_NL_STOP = """
de het een en van in is dat die op te met voor niet zijn er maar om ook als bij dan nog wel naar
kan uit of door heb hebt hebben wat wie waar hoe waarom wanneer dit deze zo al wordt worden werd
ik je jij u we wij ze zij hij mijn jouw onze ons hun heeft had was waren moet moeten kunnen wil
willen zou gaat gaan doen doet kun nu hier daar geen iets niets alles veel meer minder omdat
sinds toch even graag bedankt dank nee oke prima goed weer welke waarvan hierna eigenlijk doe ga dus
"""
_DE_STOP = """
der die das ein eine einen einem und ist nicht mit von zu den dem des auf im ich du er sie wir
ihr es sich auch noch wie was wo wer warum wann aber oder wenn dann schon sehr mehr nur kann
muss soll habe hat sind wird werden kein keine mein dein unser hier jetzt immer
"""
_FR_STOP = """
le la les un une des du de et est ce cette ces que qui quoi dans pour par sur avec sans mais ou
pas plus ne je tu il elle nous vous ils elles mon ma mes ton ta son sa ses notre votre leur au
aux comment pourquoi quand faut peut fait faire etre avoir suis sont ici aussi tres bien
"""
# First person plural: a prompt about the user's own team or setup, not a textbook question.
_OURS = frozenset("""
we our ours us ourselves nos nosso nossa nossos nossas gente nosotros nuestro nuestra nuestros nuestras wij ons
onze wir uns unser unsere unseren nous notre
""".split())
# Acknowledgements whose words are subjects elsewhere ('what plan are we on?').
_FILLER_PHRASES = (" like a plan ", " good job ", " your call ", " ship it ", " roll with it ")
# The English function words are split and hashed once for both sets (0.15 M instructions a prompt).
_EN_FUNCTION = frozenset(_EN_STOP.split())
_ALWAYS = _EN_FUNCTION.union((_EN_FILLER + _OTHER_FILLER).split())
# A word of another language's list only: "sim" is Portuguese for yes and a SIM card in English,
# "todo" is "all" and a to-do. Such a word is dropped when the prompt shows its language (another
# of its words) or shows no language at all (a lone "sim"); in a prompt that shows English, or
# another language, it is a subject word (`_Languages`). The lists stay strings, searched for
# " word ", so importing this module builds no set of them (the prompt path, see lexicon.py).
_FOREIGN = {lang: " " + words.replace("\n", " ") + " " for lang, words in (
    ("pt", _PT_STOP + _PT_FILLER), ("es", _ES_STOP), ("nl", _NL_STOP), ("de", _DE_STOP), ("fr", _FR_STOP))}


_LANGS: "dict[str, tuple[str, ...]]" = {}  # what `_langs` answered: a prompt asks about each word three times
MAX_LANGS = 4096  # a long-lived process (serve, mcp) remembers at most as many


def _langs(tok: str) -> tuple[str, ...]:
    """The other languages whose function words include `tok` (none for an English one)."""
    if tok in _ALWAYS or " " in tok:
        return ()
    got = _LANGS.get(tok)
    if got is None:
        if len(_LANGS) >= MAX_LANGS:
            _LANGS.clear()
        key = " " + tok + " "
        got = _LANGS[tok] = tuple([lang for lang, text in _FOREIGN.items() if key in text])
    return got


class _Languages:
    """Which languages a prompt's words show, to read the function words of each (see _FOREIGN)."""

    __slots__ = ("english", "seen")

    def __init__(self, tokens: list[str]) -> None:
        self.english = False
        self.seen: dict[str, set[str]] = {}
        for t in tokens:
            langs = _langs(t)
            if not langs:
                self.english = self.english or t in _EN_FUNCTION
            for lang in langs:
                self.seen.setdefault(lang, set()).add(t)

    def drops(self, tok: str, langs: tuple[str, ...]) -> bool:
        """A word of other languages' lists only (`langs`): is it a function word in this prompt?"""
        if any(self.seen.get(lang, set()) - {tok} for lang in langs):
            return True
        shown = self.english or any(words - {tok} for lang, words in self.seen.items() if lang not in langs)
        return not shown


class Query:
    """Search terms for one prompt, or the reason it gets silence.

    `terms` are the user's own words; `pasted` the other words of what they pasted; `names` the
    terms the user wrote capitalised inside a sentence (a person, a product, a place: a name the
    store may not know, which says the prompt is about something else when it does not).
    """

    __slots__ = ("terms", "silent_reason", "pasted", "names", "ours")

    def __init__(self, terms: tuple[str, ...], silent_reason: str | None = None, pasted: tuple[str, ...] = (),
                 names: frozenset[str] = frozenset(), ours: bool = False) -> None:
        self.terms = terms
        self.silent_reason = silent_reason
        self.pasted = pasted
        self.names = names
        self.ours = ours  # the user speaks of their own team or setup ("our", "we"): the prompt's shape

    def __repr__(self) -> str:
        extra = f", pasted={self.pasted!r}" if self.pasted else ""
        return f"Query(terms={self.terms!r}, silent_reason={self.silent_reason!r}{extra})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Query):
            return NotImplemented
        return (self.terms, self.silent_reason, self.pasted) == (other.terms, other.silent_reason, other.pasted)

    __hash__ = None  # type: ignore[assignment]


def build_query(prompt: str) -> Query:
    """Subject terms of a prompt, or silence with a reason.

    Reasons: 'empty' (blank prompt); 'conversational' (only filler, stopwords, emoji or
    punctuation); 'no-subject' (only tokens too short to search, placeholders or blobs).
    """
    if not isinstance(prompt, str) or not prompt.strip():
        return Query((), "empty")
    own, pasted_text = split_prompt(prompt)
    tokens = _words(own)
    terms = _select(tokens, MAX_TERMS)
    stems = {_key(t) for t in terms}
    pasted = tuple(t for t in _select(_tokens(pasted_text), MAX_PASTED_TERMS + len(terms)) if _key(t) not in stems)
    pasted = pasted[:MAX_PASTED_TERMS]
    if terms or pasted:
        return Query(terms, None, pasted, _names(own, terms) if terms else frozenset(), any(t in _OURS for t in tokens))
    if any(_is_filler(tok) for tok in tokens):
        return Query((), "conversational")
    if tokens or any(ch.isalnum() for ch in prompt[:MAX_INPUT_CHARS]):
        return Query((), "no-subject")
    return Query((), "conversational")


def subject_terms(text: str, limit: int = MAX_TERMS) -> tuple[str, ...]:
    """Subject terms of any text (e.g. the previous turn), by build_query's pipeline (its own
    words and what it pasted, in that order)."""
    if not isinstance(text, str):
        return ()
    own, pasted = split_prompt(text)
    return _select(_words(own) + _tokens(pasted), limit)


def _words(own: str) -> list[str]:
    """Tokens of the user's own words; filler phrases in short prompts collapse to 'ok'."""
    tokens = _tokens(own)
    if len(tokens) > 12:
        return tokens
    padded = f" {' '.join(tokens)} "
    for phrase in _FILLER_PHRASES:
        padded = padded.replace(phrase, " ok ")
    return padded.split()


def _tokens(text: str) -> list[str]:
    """FTS5's tokens of cleaned text, a version number (`3.12`, `v2.4.1`) kept whole instead of its parts."""
    tokens = tokenize(text)
    if "." not in text or not any(ch.isdigit() for ch in text):
        return tokens
    out: list[str] = []
    for word in text.split():
        parts = tokenize(word)
        core = word.strip(",;:!?()[]{}'\"").rstrip(".")
        if len(parts) > 1 and "." in core and _is_version(core.lower()):
            out.append(core.lower())
        else:
            out.extend(parts)
    return out


def _is_version(word: str) -> bool:
    """`3.12`, `v2.4`, `1.8.0`: digits joined by dots, an optional leading `v` (no letters after it)."""
    body = word[1:] if word[:1] == "v" else word
    pieces = body.split(".")
    return 1 < len(pieces) <= 6 and all(p.isdigit() and len(p) <= 8 for p in pieces)


def _key(term: str) -> str:
    return porter.stem(term)


def _names(own: str, terms: tuple[str, ...]) -> frozenset[str]:
    """The terms the user wrote capitalised after the first word of a sentence (an acronym in
    capitals, API or CSV, is a word of the language, not a name)."""
    wanted = set(terms)
    found: set[str] = set()
    start = True
    for word in own.split():
        if not start and word[:1].isupper() and not (word.isupper() and word.strip(".,;:!?()'\"").isalpha()):
            found.update(t for t in tokenize(word) if t in wanted)
        start = word[-1:] in ".!?:"
    return frozenset(found)


def _select(tokens: list[str], limit: int) -> tuple[str, ...]:
    """The first `limit` subject tokens, one per index term: words FTS5's porter stemmer folds
    together ("refund", "refunds") are one vote, under the first spelling (issue 17)."""
    seen: dict[str, None] = {}
    stems: set[str] = set()
    langs = _Languages(tokens)
    for tok in tokens:
        if not 1 < len(tok) <= 64 or tok in seen or (tok.isdigit() and len(tok) < 3):
            continue
        foreign = _langs(tok)
        if foreign:
            if langs.drops(tok, foreign):
                continue
        elif _is_filler(tok):
            continue
        key = porter.stem(tok)
        if key in stems:
            continue
        stems.add(key)
        seen[tok] = None
        if len(seen) >= limit:
            break
    return tuple(seen)


def _stop(tok: str) -> bool:
    return tok in _ALWAYS or bool(_langs(tok))


def _is_filler(tok: str) -> bool:
    if _stop(tok):
        return True
    if len(tok) < 3 or not tok.isalpha():
        return False
    # Laughs and stretched words: 'hahaha', 'kkkkk', 'rsrsrs', 'hmmmm', 'yesss', 'cooool'.
    if len(tok) >= 4 and any(not tok.strip(chars) for chars in ("ha", "he", "k", "rs")):
        return True
    if len(tok) - len(set(tok)) < 2:
        return False  # no letter three times, so no run of three to squeeze (issue 44: a C-level test)
    once = _squeeze(tok, 1)
    return once != tok and (_stop(once) or _stop(_squeeze(tok, 2)))


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
