"""The Porter stemmer as SQLite's FTS5 `porter` tokenizer applies it (stdlib only: the prompt path).

The index is built with `tokenize='porter unicode61 remove_diacritics 2'`, so "refund" and
"refunds", "validate" and "validator" are one term to FTS5. The query side must know that too,
or one word would get two votes (issue 17). `stem` follows the algorithm FTS5 runs (M. F.
Porter, 1980, with the "bli" and "logi" rules of its later revision): tokens shorter than 3 or
longer than 64 characters pass through unchanged. `tests/test_porter.py` checks it against
SQLite itself on every word of the labeled sets.
"""

MAX_TOKEN = 64
_VOWELS = "aeiou"


# a vowel -> "v", y -> "y" (decided by its neighbour), any other letter -> "c"
_SHAPE = str.maketrans("abcdefghijklmnopqrstuvwxyz", "vcccvcccvcccccvcccccvcccyc")


def _shape(word: str) -> str:
    """Each character as "c" (consonant) or "v" (vowel), in one C-level pass for a word of lowercase
    ASCII letters: y is a consonant first and after a vowel, a vowel after a consonant (Porter's
    definition, as FTS5 applies it). Every test below reads this string; the shape of a prefix is
    the prefix of the shape."""
    if word.isascii() and word.isalpha() and word.islower():
        shape = word.translate(_SHAPE)
    else:  # digits and other characters are consonants
        shape = "".join("v" if c in _VOWELS else "y" if c == "y" else "c" for c in word)
    if "y" not in shape:
        return shape
    out = list(shape)
    for i, c in enumerate(out):
        if c == "y":
            out[i] = "c" if i == 0 or out[i - 1] == "v" else "v"
    return "".join(out)


def _measure(stem: str) -> int:
    """m in [C](VC){m}[V]: the number of vowel-consonant sequences."""
    return _shape(stem).count("vc")


def _has_vowel(stem: str) -> bool:
    return "v" in _shape(stem)


def _double_consonant(word: str) -> bool:
    # As FTS5 checks it: two equal letters that are not a, e, i, o, u ("yy" counts).
    return len(word) >= 2 and word[-1] == word[-2] and word[-1] not in _VOWELS


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (e.g. -hop, -fil)."""
    return len(word) >= 3 and _shape(word).endswith("cvc") and word[-1] not in "wxy"


def _replace(word: str, rules: "tuple[tuple[str, str], ...]", min_m: int) -> str:
    """The first rule whose suffix `word` ends with applies (when its stem's m > min_m), or none."""
    for suffix, repl in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + repl if _measure(stem) > min_m else word
    return word


def _ends(word: str, suffix: str) -> bool:
    """FTS5 matches a suffix only when something precedes it ("ies" alone is not -ies)."""
    return len(word) > len(suffix) and word.endswith(suffix)


def _step1ab(w: str) -> str:
    if _ends(w, "sses"):
        w = w[:-2]
    elif _ends(w, "ies"):
        w = w[:-2]
    elif _ends(w, "ss"):
        pass
    elif _ends(w, "s"):
        w = w[:-1]
    if _ends(w, "eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if _ends(w, suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _double_consonant(w) and w[-1] not in "lsz":
                return w[:-1]
            if _measure(w) == 1 and _cvc(w):
                return w + "e"
            return w
    return w


# Each step's rules, longest suffix first: the first that matches is the longest, which Porter
# picks (two suffixes of one length never both end a word). tests/test_porter.py holds the order.
_STEP2 = (("ational", "ate"), ("ization", "ize"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
          ("tional", "tion"), ("biliti", "ble"), ("entli", "ent"), ("ousli", "ous"), ("ation", "ate"),
          ("alism", "al"), ("aliti", "al"), ("iviti", "ive"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
          ("alli", "al"), ("ator", "ate"), ("logi", "log"), ("bli", "ble"), ("eli", "e"))
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ness", ""), ("ful", ""))
_STEP4 = ("ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ion", "ism", "ate", "iti", "ous", "ive",
          "ize", "al", "er", "ic", "ou")
# Each step's suffixes together: one C-level test skips a step no suffix of which ends the word.
_STEP2_ANY = tuple(dict(_STEP2))
_STEP3_ANY = tuple(dict(_STEP3))


def _step4(w: str) -> str:
    if not w.endswith(_STEP4):
        return w
    for suffix in _STEP4:
        if w.endswith(suffix):
            stem = w[: -len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return w
            return stem if _measure(stem) > 1 else w
    return w


def _step5(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            w = stem
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w


_STEMS: "dict[str, str]" = {}  # what `stem` answered: the query and each source's look-ups stem the same words
MAX_STEMS = 4096  # a long-lived process (serve, mcp) remembers at most as many


def stem(word: str) -> str:
    """The term FTS5's porter tokenizer stores for one lowercase token. Each word is stemmed once
    per process: the prompt's words are stemmed to build the query and again for every source's
    term look-ups (issue 41: three sources, one prompt)."""
    got = _STEMS.get(word)
    if got is None:
        if len(_STEMS) >= MAX_STEMS:
            _STEMS.clear()
        got = _STEMS[word] = _stem(word)
    return got


def _stem(word: str) -> str:
    if len(word) < 3 or len(word) > MAX_TOKEN:
        return word
    w = _step1ab(word)
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    if w.endswith(_STEP2_ANY):
        w = _replace(w, _STEP2, 0)
    if w.endswith(_STEP3_ANY):
        w = _replace(w, _STEP3, 0)
    return _step5(_step4(w))
