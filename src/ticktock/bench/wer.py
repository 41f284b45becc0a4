"""Word error rate after normalization (lowercase, punctuation stripped), with jiwer."""

from __future__ import annotations

import re


def normalize_words(text: str) -> str:
    """Lowercase, drop punctuation (keeping in-word apostrophes), collapse whitespace."""
    text = re.sub(r"[^a-z0-9' ]", " ", text.lower())
    text = re.sub(r"(?<![a-z0-9])'|'(?![a-z0-9])", " ", text)
    return " ".join(text.split())


def corpus_wer(references: list[str], hypotheses: list[str]) -> float:
    """Total word errors over total reference words, after `normalize_words`.

    An empty hypothesis counts every reference word as deleted (WER 1.0 for that text).
    """
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    pairs = [(normalize_words(r), normalize_words(h)) for r, h in zip(references, hypotheses)]
    pairs = [(r, h) for r, h in pairs if r]
    if not pairs:
        raise ValueError("no reference words to score against")
    refs, hyps = [r for r, _ in pairs], [h for _, h in pairs]
    if not any(hyps):
        return 1.0
    errors = sum(_errors(r, h) for r, h in zip(refs, hyps))
    return errors / sum(len(r.split()) for r in refs)


def _errors(ref: str, hyp: str) -> int:
    import jiwer

    if not hyp:
        return len(ref.split())
    out = jiwer.process_words(ref, hyp)
    return out.substitutions + out.deletions + out.insertions


def user_words(entry: dict) -> str:
    """What the user said in a rendered session, in time order (background talkers excluded)."""
    words = sorted((w for w in entry.get("words", []) if w.get("speaker") == "user"), key=lambda w: w["start"])
    return " ".join(w["word"] for w in words)
