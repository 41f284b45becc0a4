"""System prompts for training sessions: a varied set that includes the live default.

The suites keep `compose.SYSTEM_PROMPTS` (their scripts must not change); training draws from more
wordings so the model answers whatever the prompt's wording, and draws the live default
(`DEFAULT_SYSTEM_PROMPT`: server, page, `demo`) often, since that is the one it meets there.
"""

from __future__ import annotations

import random

from .compose import DEFAULT_SYSTEM_PROMPT, SYSTEM_PROMPTS, TOOLS_LINE

TRAINING_PROMPTS = [
    *SYSTEM_PROMPTS,
    "you are a voice assistant.",
    "you are a helpful assistant.",
    "you are an assistant that listens and answers out loud. be brief.",
    "answer the user's questions in one short sentence.",
    "you help people by voice. keep it short and friendly.",
    "you are a calm voice assistant. wait until the user has finished, then answer.",
    "you are a phone assistant for travel, money and time questions.",
    "be a concise, polite voice helper.",
    "you are a spoken assistant. use the tools when a request needs them.",
    "you are a smart speaker. reply in a few words.",
    "you are an assistant in a busy kitchen. answer quickly and clearly.",
    "help the user. short spoken answers only.",
]
DEFAULT_SHARE = 0.3  # how often a training session uses the live default prompt


def training_prompt(rng: random.Random) -> str:
    """A training session's system prompt: the live default three times in ten, else any of the set."""
    if rng.random() < DEFAULT_SHARE:
        return DEFAULT_SYSTEM_PROMPT
    return f"{rng.choice(TRAINING_PROMPTS)} {TOOLS_LINE}"
