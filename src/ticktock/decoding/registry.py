"""Decoders by name (the names the CLI and the benchmark use, docs/design.md §10)."""

from __future__ import annotations

from typing import Callable

from ticktock.decoding.base import AutoregressiveDecoder, Decoder
from ticktock.decoding.lookahead import LookaheadDecoder
from ticktock.decoding.prompt_lookup import PromptLookupDecoder
from ticktock.decoding.speculative_listening import (MarginBranching, SilenceOnly, SilenceRunnerUp,
                                                     SpeculativeListening)
from ticktock.decoding.token_recycling import TokenRecyclingDecoder

DECODERS: dict[str, Callable[[], Decoder]] = {
    "ar": AutoregressiveDecoder,
    "pld": PromptLookupDecoder,
    "tr": TokenRecyclingDecoder,
    "lookahead": LookaheadDecoder,
    "sl": SpeculativeListening,
    "sl-silence": SilenceOnly,
    "sl-runnerup": SilenceRunnerUp,
    "sl-tree": lambda: SpeculativeListening(branches=3),
    "sl-branch": MarginBranching,
}


def make_decoder(name: str) -> Decoder:
    """A fresh decoder for ``name``; ValueError names the known ones."""
    try:
        factory = DECODERS[name]
    except KeyError:
        raise ValueError(f"unknown decoder {name!r}; known: {', '.join(sorted(DECODERS))}") from None
    return factory()
