"""The transcription side channel (docs/design.md §4): `<|asr_start|> words <|asr_end|>` per unit.

A segment stays in the context and is never spoken. The model decides whether to
open one: at the designated point the session looks at the greedy next token; if it
is `<|asr_start|>` the segment is decoded greedily until `<|asr_end|>`, force-closed
(an `<|asr_end|>` committed in place of the model's token) after `max_asr_tokens`
transcript tokens or when a control token comes up. Placements:

* ``after_decision`` (the paper): right after a `<|speak|>`/`<|tool|>` decision, the
  response follows the segment (on the critical path); after `<|listen|>` it trails
  the unit like ``after_content``;
* ``after_content``: after the unit's last output token, decoded in the slack before
  the next chunk arrives; its time is idle work of the next unit.

`UnitRules` applies these rules to a unit's tokens one at a time and rules on each verdict
(`Ruling`: how many of its tokens stand, and the token the rules force at the cut, if any),
which `decoding.verify.cut_verdict` applies, so any decoder's verdicts go through the same
rule and stay equal to greedy decoding; `decode_slack_segment` decodes a trailing segment
(the session runs it at the start of the next unit's idle work); `write_slack_segment` writes
given words there instead (oracle transcripts: an evaluation aid that separates reading from
memory from transcribing into it). Both take the session's engine and its `Committed` tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from ..engine import Engine, Segment
from ..protocol import DuplexProtocol, SlotKind
from .committed import Committed

PLACEMENTS = ("after_decision", "after_content")


def side_channel_placement(value: str | None) -> str | None:
    """None/"off" -> None; a placement name -> itself; anything else is a ValueError."""
    if value in (None, "off", "none"):
        return None
    if value not in PLACEMENTS:
        raise ValueError(f"unknown side-channel placement {value!r}; known: off, {', '.join(PLACEMENTS)}")
    return value


@dataclass
class Ruling:
    """The unit rules on one verdict: its first `n` tokens stand, the n-th being `last` (its own token, or
    one the rules force there: a segment's `<|asr_start|>`, or an `<|asr_end|>` that force-closes it)."""

    n: int
    last: int
    kinds: list[int]  # the n tokens' ledger kinds
    in_segment: bool  # any of them is a segment token
    forced: bool  # `last` is not the verdict's own token


@dataclass
class UnitRules:
    """The side-channel and unit-end rules over one unit's committed tokens, in order.

    Phases: ``response`` (native decoding), ``await`` (the designated point after a
    speak/tool decision: open iff the greedy token is `<|asr_start|>`), ``open`` (inside
    the segment). The unit token cap counts response tokens only.
    """

    protocol: DuplexProtocol
    placement: str | None
    sampling: bool = False  # segments are greedy; cut verdicts where greedy and sampled tokens meet
    phase: str = "response"
    n_response: int = 0
    decision: int | None = None
    transcript: list[int] = field(default_factory=list)  # segment tokens without delimiters
    segment_tokens: int = 0  # committed segment tokens, delimiters included
    opened: bool = False
    forced: bool = False
    ended: bool = False

    @property
    def greedy_phase(self) -> bool:
        """Is the next token a transcript token (verified greedily even when sampling)?"""
        return self.phase == "open"

    def budget(self) -> int:
        """An upper bound on the tokens still to commit in this unit (the exact cut is `feed`'s)."""
        left = self.protocol.max_unit_tokens - self.n_response
        if self.phase == "open":
            return left + self.protocol.max_asr_tokens + 1 - len(self.transcript)
        if self.placement == "after_decision" and not self.opened and self.n_response <= 1:
            return left + self.protocol.max_asr_tokens + 2
        return left

    def feed(self, token: int, greedy: int) -> tuple[int, SlotKind, bool]:
        """Commit the next token; `greedy` is the argmax at its position (== token when greedy).

        Returns (the token committed, its ledger kind, cut): with cut set, no later token of
        the same verdict may be committed (the unit ended, a token was replaced, or the
        verification rule changes).
        """
        p = self.protocol
        if self.phase == "await":
            if greedy == p.id("asr_start"):
                self.phase, self.opened = "open", True
                self.segment_tokens += 1
                return greedy, SlotKind.ASR_MARK, token != greedy or self.sampling
            self.phase = "response"
        if self.phase == "open":
            closing = token == p.id("asr_end")
            self.segment_tokens += 1
            if closing or token in p.control_ids or len(self.transcript) >= p.max_asr_tokens:
                self.phase, self.forced = "response", not closing
                return p.id("asr_end"), SlotKind.ASR_MARK, not closing or self.sampling
            self.transcript.append(token)
            return token, SlotKind.ASR, False
        self.n_response += 1
        if self.n_response == 1:
            self.decision = token
            if self.placement == "after_decision" and token in (p.id("speak"), p.id("tool")):
                self.phase = "await"
        kind = p.output_kind(token)
        if kind == SlotKind.ASR_MARK:  # a delimiter outside a segment is just a response token
            kind = SlotKind.TEXT
        if kind == SlotKind.TEXT and self.decision == p.ids.get("tool"):  # a protocol may have no tool token
            kind = SlotKind.TOOL
        self.ended = p.is_unit_end(token, self.n_response)
        return token, kind, self.ended

    def rule(self, tokens: list[int], greedy: list[int]) -> Ruling:
        """Feed a verdict's tokens up to the first cut; `greedy[i]` is the argmax at token i's position."""
        kinds: list[int] = []
        n_segment = self.segment_tokens
        for tok, g in zip(tokens, greedy):
            last, kind, cut = self.feed(tok, g)
            kinds.append(int(kind))
            if cut:
                break
        return Ruling(len(kinds), last, kinds, self.segment_tokens > n_segment, forced=last != tok)

    def draft_kinds(self, tokens: list[int], parents: list[int]) -> list[int]:
        """The ledger kind each node of a draft tree (`Draft.tokens`/`parents`) takes if its path is committed.

        Each node continues its parent's rules (the root: these), without touching them.
        """
        states: list[UnitRules] = []
        kinds: list[int] = []
        for tok, parent in zip(tokens, parents):
            src = self if parent < 0 else states[parent]
            state = replace(src, transcript=list(src.transcript))
            _, kind, _ = state.feed(tok, tok)
            states.append(state)
            kinds.append(int(kind))
        return kinds

    def banned_in_response(self) -> list[int]:
        """Token ids the response may not commit: with ``after_content`` a segment has one designated
        point, after the unit's last token, so the delimiters never appear inside the response (a model
        also trained for ``after_decision`` would otherwise open a segment right after its decision)."""
        if self.placement == "after_content":
            return [self.protocol.id("asr_start"), self.protocol.id("asr_end")]
        return []

    def wants_trailing_segment(self) -> bool:
        """Does a segment check follow the unit's last output token?"""
        if self.placement == "after_content":
            return True
        return self.placement == "after_decision" and self.decision == self.protocol.id("listen")


@dataclass
class SlackSegment:
    tokens: list[int]  # committed tokens, delimiters included (empty if the model did not open one)
    transcript: list[int]
    forced: bool
    forwards: int
    seconds: float


@torch.no_grad()
def decode_slack_segment(engine: Engine, protocol: DuplexProtocol, committed: Committed, unit: int) -> SlackSegment:
    """Prefill unit `unit`'s last output token (pending) and decode a trailing segment if the model opens one.

    Greedy, one token per forward (off the response's critical path). Leaves the last
    committed token pending for the next unit's prefill.
    """
    p = protocol
    n0 = len(engine.records)
    nxt = int(engine.forward(committed.take_pending(), unit)[-1].argmax())
    tokens: list[int] = []
    transcript: list[int] = []
    forced = False
    if nxt == p.id("asr_start"):
        tokens.append(nxt)
        last, kind = nxt, SlotKind.ASR_MARK
        while True:
            nxt = int(engine.forward([Segment(torch.tensor([last]), [int(kind)])], unit)[-1].argmax())
            if nxt == p.id("asr_end") or nxt in p.control_ids or len(transcript) >= p.max_asr_tokens:
                forced = nxt != p.id("asr_end")
                tokens.append(p.id("asr_end"))
                break
            tokens.append(nxt)
            transcript.append(nxt)
            last, kind = nxt, SlotKind.ASR
        committed.hold([p.id("asr_end")], [int(SlotKind.ASR_MARK)])
        committed.history += tokens
    return _slack_segment(engine, n0, tokens, transcript, forced)


@torch.no_grad()
def write_slack_segment(engine: Engine, protocol: DuplexProtocol, committed: Committed, unit: int,
                        words: str) -> SlackSegment:
    """Prefill unit `unit`'s last output token (pending) and, if `words` is not empty, the segment holding them,
    in place of the model's own (one forward; the model's choice to open one is overridden).

    Leaves the cache and the pending tokens as `decode_slack_segment` would had the model written `words`.
    """
    n0 = len(engine.records)
    tokens = protocol.asr_ids(words) if words.strip() else []
    segs = committed.take_pending()
    if tokens:  # <|asr_start|> and the words now; <|asr_end|> is prefilled with the next unit, as decoded ones are
        segs.append(Segment(torch.tensor(tokens[:-1]), [int(SlotKind.ASR_MARK)] + [int(SlotKind.ASR)] * (len(tokens) - 2)))
    if segs:
        engine.forward(segs, unit)
    if tokens:
        committed.hold(tokens[-1:], [int(SlotKind.ASR_MARK)])
    committed.history += tokens
    return _slack_segment(engine, n0, tokens, tokens[1:-1], False)


def _slack_segment(eng: Engine, n0: int, tokens: list[int], transcript: list[int], forced: bool) -> SlackSegment:
    """The segment, with the forwards the engine recorded since its record `n0` and their time."""
    recs = eng.records[n0:]
    return SlackSegment(tokens, transcript, forced, len(recs), sum(r.seconds for r in recs))
