"""Text helpers: spoken words of a text, number words, and ~1 s pieces of a reply."""

from __future__ import annotations

import re

ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen").split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
            "twelfth").split()

PIECE_S = 1.0  # target speech per speak unit
PIECE_MAX_WORDS = 4
NOMINAL_RATE = 170  # espeak words per minute the estimates below assume
_WORD_RE = re.compile(r"[a-z0-9']+(?:-[a-z0-9']+)*")


def number_words(n: int) -> str:
    """0 <= n < 10000 as spoken English: 342 -> 'three hundred forty two'."""
    if not 0 <= n < 10000:
        raise ValueError(f"number out of range: {n}")
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    rest = n % 1000
    return number_words(n // 1000) + " thousand" + ("" if rest == 0 else " " + number_words(rest))


def digits_words(s: str) -> str:
    """'4729' -> 'four seven two nine' (codes are read digit by digit)."""
    return " ".join(ONES[int(c)] for c in s)


def spoken_words(text: str) -> list[str]:
    """The words a text is spoken as: lower case, punctuation dropped (apostrophes and
    in-word hyphens kept). These are the units the renderer times exactly."""
    return _WORD_RE.findall(text.lower())


def pause_after(token: str) -> float:
    """Extra silence after a written token ending in punctuation (timing rule 2)."""
    if token.endswith((".", "?", "!", ":")):
        return 0.45
    if token.endswith((",", ";")):
        return 0.25
    return 0.0


def syllables(word: str) -> int:
    """A rough syllable count (vowel groups), at least 1; numbers and codes by their digits."""
    w = word.lower()
    if any(c.isdigit() for c in w):
        return 1 + sum(c.isdigit() for c in w) // 2
    groups = re.findall(r"[aeiouy]+", w)
    n = len(groups) - (1 if w.endswith("e") and len(groups) > 1 and not w.endswith("le") else 0)
    return max(1, n)


def estimate_word_s(word: str, rate: int = NOMINAL_RATE) -> float:
    """Estimated spoken duration of one word at `rate` words per minute (for layouts
    without audio; rendering replaces it with the real duration)."""
    return (0.12 + 0.16 * syllables(word)) * NOMINAL_RATE / rate


def speech_pieces(text: str) -> list[str]:
    """Split a reply into consecutive pieces of about PIECE_S of speech (2-3 words).

    A piece ends at sentence punctuation, before it would exceed PIECE_S, or at
    PIECE_MAX_WORDS words. Joining the pieces with spaces gives back `text`.
    """
    pieces: list[str] = []
    cur: list[str] = []
    dur = 0.0
    for tok in text.split():
        d = estimate_word_s(tok.strip(".,?!:;"))
        if cur and (dur + d > PIECE_S * 1.1 or len(cur) >= PIECE_MAX_WORDS):
            pieces.append(" ".join(cur))
            cur, dur = [], 0.0
        cur.append(tok)
        dur += d
        if tok.endswith((".", "?", "!")) or (tok.endswith(",") and len(cur) >= 2):
            pieces.append(" ".join(cur))
            cur, dur = [], 0.0
    if cur:
        pieces.append(" ".join(cur))
    return pieces


def speakable(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text handed to a speech engine to say in one go (each token's spoken words, its closing punctuation kept
    for the prosody) and each spoken word's 1-based character span [a, b) in it."""
    parts, spans, pos = [], [], 1
    for tok in text.split():
        words = spoken_words(tok)
        for w in words:
            spans.append((pos, pos + len(w)))
            parts.append(w)
            pos += len(w) + 1
        tail = tok.rstrip()[-1:] if words and tok.rstrip()[-1:] in ",.?!;:" else ""
        if tail:
            parts[-1] += tail
            pos += 1
    return " ".join(parts), spans
