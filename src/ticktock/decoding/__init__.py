"""Draft, verify and the decoders that propose drafts (docs/design.md §6)."""

from ticktock.decoding.base import AutoregressiveDecoder, Decoder
from ticktock.decoding.draft import Draft
from ticktock.decoding.lookahead import LookaheadDecoder
from ticktock.decoding.prompt_lookup import PromptLookupDecoder
from ticktock.decoding.registry import DECODERS, make_decoder
from ticktock.decoding.token_recycling import TokenRecyclingDecoder
from ticktock.decoding.verify import Verdict, verify_draft, verify_greedy, verify_sampling

__all__ = [
    "DECODERS",
    "AutoregressiveDecoder",
    "Decoder",
    "Draft",
    "LookaheadDecoder",
    "PromptLookupDecoder",
    "TokenRecyclingDecoder",
    "Verdict",
    "make_decoder",
    "verify_draft",
    "verify_greedy",
    "verify_sampling",
]
