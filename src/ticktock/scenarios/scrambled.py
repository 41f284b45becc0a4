"""A session whose user says its words in a random order: listening that no template predicts.

A model trained on templated requests hears partly through its prior: a phrase it has not been taught
("what day was yesterday") comes out as one it has ("what day is it in delhi"). Transcribing the same words
shuffled can only be done from the audio. Replies, tool calls, backchannels and timing rules are untouched;
the renderer lays the shuffled plan out again with the words' real durations.
"""

from __future__ import annotations

import copy
import random
import re

from .script import Script

_WORD = re.compile(r"[\w']+")


def scrambled(script: Script, rng: random.Random) -> Script:
    """A copy of `script` whose user utterances say their words (punctuation dropped) in an order drawn from `rng`."""
    out = copy.deepcopy(script)
    new_text: dict[str, str] = {}
    for ev in out.plan.get("events", []):
        if ev.get("kind") == "say" and ev.get("speaker") == "user":
            words = _WORD.findall(ev["text"])
            rng.shuffle(words)
            new_text[ev["text"]] = ev["text"] = " ".join(words)
    for u in out.utterances:
        u.text = new_text.get(u.text, u.text)
    return out
