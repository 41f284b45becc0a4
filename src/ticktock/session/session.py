"""`DuplexSession`: step a duplex model through a session, one audio chunk per unit.

Per unit t the session does
  * idle work (`prepare`, before chunk t arrives): prefill the previous unit's
    last token and the `<unit>` marker; let the decoder work on an `IdleContext`
    (Speculative Listening drafts there);
  * post-audio work (`step`): one forward over the chunk's audio embeddings
    (+ tool result) carrying the decoder's draft, then verify-and-continue until
    the unit ends (`<|listen|>`, a terminator, or the unit's token cap).
Every token is accepted by `decoding.verify`, so any decoder commits exactly what
autoregressive decoding would (greedy), or the same distribution (sampling).
Every verdict passes through `UnitRules`, which rule where it is cut (the unit's end; with a
transcription side channel, `side_channel.py`, a segment's delimiters). A trailing segment is
decoded at the start of the next unit's idle work (it never delays the response) and filled
into the unit's result then.
The post-audio loop is a generator of forward requests (`unit_steps`): `step` runs it on
the session's own engine (`drive`), `batch.BatchedSessions` runs several sessions' in
batched forwards.
"""

from __future__ import annotations

from typing import Callable, Generator, Sequence

import numpy as np
import torch

from ..audio.front_end import audio_front_end
from ..cache.policies import EvictionPolicy, NoEviction
from ..decoding.base import Decoder
from ..decoding.draft import Draft
from ..decoding.idle import IdleContext, run_steps
from ..decoding.registry import make_decoder
from ..decoding.verify import Verdict, cut_verdict, verify_greedy, verify_sampling
from ..engine import Engine, EngineChoice, ForwardRequest, Segment, resolve_engine
from ..model.duplex import DuplexLM
from ..protocol import DuplexProtocol, SlotKind
from .clock import Clock, WallClock
from .committed import Committed
from .result import UnitResult
from .side_channel import UnitRules, decode_slack_segment, side_channel_placement, write_slack_segment
from .timeline import Timeline

DEFAULT_SYSTEM = "You are ticktock, a helpful voice assistant."

UnitSteps = Generator[ForwardRequest, torch.Tensor, UnitResult]  # a unit's forwards: yields requests, is sent logits


@torch.no_grad()
def drive(steps: Generator[ForwardRequest, torch.Tensor, object], engine: Engine):
    """Run a generator of forward requests (`DuplexSession.unit_steps`) on one engine; return what it returns."""
    return run_steps(steps, forward_on(engine))


def forward_on(engine: Engine) -> Callable[[ForwardRequest], torch.Tensor]:
    """A request -> its logits (1 + n, V), run on `engine`."""
    return lambda req: engine.forward(req.linear, req.unit, req.draft, req.draft_kinds)


def top2_margins(logits: torch.Tensor, rows: list[int]) -> list[float]:
    """logits (n + 1, V), the rows committed tokens were chosen at -> top-1 minus top-2 logit per row.

    A near-tie (small margin) is where two numerically different but equivalent forwards (bf16, a
    batched verification vs a one-token step) may pick different tokens."""
    top = logits[rows].topk(2, dim=-1).values
    return (top[:, 0] - top[:, 1]).tolist()


class DuplexSession:
    def __init__(self, model: DuplexLM, protocol: DuplexProtocol, decoder: Decoder | str = "ar",
                 clock: Clock | None = None, temperature: float = 0.0, seed: int = 0,
                 system: str = DEFAULT_SYSTEM, policy: EvictionPolicy | None = None, max_slots: int = 16384,
                 side_channel: str | None = None, oracle_transcripts: Sequence[str] | None = None,
                 engine: EngineChoice = "auto"):
        """engine: "auto" (fast on CUDA, eager elsewhere), "eager", "fast", an `Engine` to reuse (its cache is
        reset; a benchmark's consecutive sessions share one, so CUDA graphs are captured once) or a factory.
        side_channel: None/"off", "after_decision" or "after_content" (transcription segments, docs/design.md §4).
        oracle_transcripts: per unit, the words its trailing segment holds in place of the model's own ('' for
        none; `after_content` only): recall with perfect transcripts in the runtime's own context."""
        self.model, self.protocol = model, protocol
        self.side_channel = side_channel_placement(side_channel)
        if self.side_channel is not None and not protocol.has("asr_start"):
            raise ValueError(f"protocol {protocol.name!r} has no side-channel tokens (asr_start/asr_end)")
        if oracle_transcripts is not None and self.side_channel != "after_content":
            raise ValueError("oracle_transcripts needs side_channel='after_content' (segments trail their unit)")
        self.oracle = list(oracle_transcripts) if oracle_transcripts is not None else None
        self.decoder = make_decoder(decoder) if isinstance(decoder, str) else decoder
        self.clock = clock or WallClock(model.device)
        self.engine = resolve_engine(engine, model, max_slots)
        self.engine.clock = self.clock
        self.temperature = temperature
        self.generator = torch.Generator().manual_seed(seed)
        self.policy = policy or NoEviction()
        self.system = system
        self.chunk_samples = protocol.chunk_samples
        self.front = audio_front_end(model, self.chunk_samples)
        self.reset()

    # ------------------------------------------------------------ lifecycle
    def reset(self) -> None:
        self.engine.reset()
        self.front.reset()
        self.decoder.reset()
        self.timeline = Timeline(self.protocol.chunk_seconds)
        self.index = 0
        self.committed = Committed()
        self.slack_due: UnitResult | None = None  # a unit whose trailing segment is still to decode
        self.prepared: tuple[float, int] | None = None  # (idle seconds, idle forwards) for the next unit
        self.carried: list[Segment] = []  # idle prefill left to the next unit's first forward (`skip_idle_work`)
        ids = self.protocol.prefix_ids(self.system)
        self.engine.forward([self.ids_segment(ids, SlotKind.PREFIX)], unit=-1)
        self.committed.history += ids

    def ids_segment(self, ids: list[int], kind: SlotKind) -> Segment:
        return Segment(torch.tensor(ids, dtype=torch.long), [int(kind)] * len(ids))

    def audio_segments(self, audio: torch.Tensor) -> list[Segment]:
        """A unit's audio embeddings (E, D) as the forward takes them, with what closes them (`audio_end`)."""
        segs = [Segment(audio, [int(SlotKind.AUDIO)] * audio.shape[0])]
        close = self.protocol.audio_close_ids()
        return segs + [self.ids_segment(close, SlotKind.UNIT_MARKER)] if close else segs

    # ------------------------------------------------------------ idle work
    def prepare(self, window: float | None = None) -> None:
        """Idle work for the next unit, before its audio arrives: prefill, the engine's (`Engine.upkeep`: a graph
        engine captures graphs it will soon need), then the decoder's (`Decoder.prepare`).

        window: idle seconds available (default: from the replay timeline).
        """
        drive(self.prepare_steps(window), self.engine)

    def prepare_steps(self, window: float | None = None, seconds: Callable[[], float] | None = None
                      ) -> Generator[ForwardRequest, torch.Tensor, None]:
        """`prepare` as a generator of its forwards (like `unit_steps`), for a driver that batches sessions' idle
        work. seconds: how the decoder reads the idle time it has used (default: the clock's seconds of its
        forwards; a driver that shares the device reads its own clock)."""
        if self.prepared is not None:
            return
        if window is None:
            window = self.timeline.window_for(self.index)
        n0 = len(self.engine.records)
        yield ForwardRequest(self._opening(), self.index)
        used = sum(r.seconds for r in self.engine.records[n0:])  # a trailing segment + this prefill
        used += self.engine.upkeep(max(0.0, window - used))
        used += yield from self.decoder.prepare_steps(self._idle_context(seconds), max(0.0, window - used))
        self.prepared = (used, len(self.engine.records) - n0)

    def skip_idle_work(self) -> None:
        """The next unit gets no idle work (its audio has come and the device had no time for it): no drafting,
        and the prefill `prepare` would run on its own goes into the unit's first forward, ahead of the audio —
        the same slots in the same order, one forward fewer."""
        if self.prepared is not None:
            return
        n0 = len(self.engine.records)
        self.carried = self._opening()
        self.prepared = (sum(r.seconds for r in self.engine.records[n0:]), len(self.engine.records) - n0)

    def _opening(self) -> list[Segment]:
        """What opens the next unit, committed to the history: the last unit's held token and `<unit>` (after
        `</unit>` where the protocol has one), once a trailing segment due is decoded. Segments to forward."""
        self.flush()
        opening = self.protocol.unit_open_ids(self.index)
        segs = self.committed.take_pending() + [self.ids_segment(opening, SlotKind.UNIT_MARKER)]
        self.committed.history += opening
        return segs

    def _idle_context(self, seconds: Callable[[], float] | None = None) -> IdleContext:
        """What the decoder's idle work for unit `index` may touch: forks of the cache, forwards at this unit."""
        eng, unit, n0 = self.engine, self.index, len(self.engine.records)
        return IdleContext(
            unit, self.protocol, eng.cache,
            silence_request=lambda: ForwardRequest(self.audio_segments(self.front.silence_hypothesis()), unit),
            ids_request=lambda ids, kind: ForwardRequest([self.ids_segment(ids, kind)], unit),
            run=forward_on(eng),
            seconds=seconds or (lambda: sum(r.seconds for r in eng.records[n0:])))

    def flush(self) -> None:
        """Decode the last unit's trailing side-channel segment now, if one is due (at a session's end)."""
        if self.slack_due is None:
            return
        res, self.slack_due = self.slack_due, None
        if self.oracle is None:
            seg = decode_slack_segment(self.engine, self.protocol, self.committed, res.index)
        else:
            words = self.oracle[res.index] if res.index < len(self.oracle) else ""
            seg = write_slack_segment(self.engine, self.protocol, self.committed, res.index, words)
        res.slack_tokens = seg.tokens
        res.asr_forwards, res.asr_seconds = seg.forwards, seg.seconds
        if seg.tokens:
            res.asr, res.asr_forced = self.protocol.decode(seg.transcript), seg.forced

    # ------------------------------------------------------------ post-audio work
    @torch.no_grad()
    def step(self, chunk: np.ndarray, tool_result: str | None = None) -> UnitResult:
        """Consume one chunk (`chunk_samples` float32 samples at 16 kHz) and decode its unit."""
        return drive(self.unit_steps(chunk, tool_result), self.engine)

    def unit_steps(self, chunk: np.ndarray, tool_result: str | None = None) -> UnitSteps:
        """`step` as a generator of its unit's post-audio forwards, for a driver that batches sessions.

        It yields a `ForwardRequest` per forward and must be sent that forward's logits (1 + n_nodes, V),
        computed on this session's engine cache (`drive` runs them on `self.engine`; `session.batch`
        runs several sessions' requests in one forward); it returns the `UnitResult`. The chunk is
        checked here, before anything runs; idle work (`prepare`) and the audio encoder run at the first
        `next`. A generator left unfinished leaves the session mid-unit.
        """
        chunk = np.asarray(chunk, dtype=np.float32)
        if chunk.shape != (self.chunk_samples,):
            raise ValueError(f"a chunk must be {self.chunk_samples} samples at 16 kHz, got shape {chunk.shape}")
        return self._unit_steps(chunk, tool_result)

    def _unit_steps(self, chunk: np.ndarray, tool_result: str | None) -> UnitSteps:
        self.prepare()
        idle_used, idle_forwards = self.prepared
        n_rec = len(self.engine.records)
        audio, enc = self.clock.time_encoder(lambda: self.front.push(chunk))
        linear, self.carried = self.carried + self.audio_segments(audio), []
        if tool_result is not None:
            ids = self.protocol.tool_result_ids(tool_result)
            linear.append(self.ids_segment(ids, SlotKind.TOOL_RESULT))
            self.committed.history += ids
        res, rules = yield from self._decode_unit(linear)
        res.encoder_seconds, res.forward_seconds = enc, [r.seconds for r in self.engine.records[n_rec:]]
        post = enc + sum(res.forward_seconds)
        timing = self.timeline.add(self.index, idle_used, post)
        res.idle_used, res.idle_forwards, res.window = idle_used, idle_forwards, timing.window
        res.overflow, res.post_audio, res.latency, res.lag = timing.overflow, post, timing.latency, timing.lag
        if rules.wants_trailing_segment():
            self.slack_due = res  # decoded in the slack: the next `prepare` (or `flush`)
        self.policy.apply(self.engine.cache, self.index)
        res.resident_slots = self.engine.cache.length
        self.index += 1
        self.prepared = None
        return res

    def _decode_unit(self, linear: list[Segment]
                     ) -> Generator[ForwardRequest, torch.Tensor, tuple[UnitResult, UnitRules]]:
        cache, history = self.engine.cache, self.committed.history
        rules = UnitRules(self.protocol, self.side_channel, sampling=self.temperature > 0)
        banned = rules.banned_in_response()
        out: list[int] = []
        res = UnitResult(self.index, None, out)
        while True:
            budget = rules.budget()
            draft = self.decoder.propose(history, budget - 1) if budget > 1 else None
            if draft is not None and len(draft) == 0:
                draft = None
            draft_kinds = rules.draft_kinds(draft.tokens, draft.parents) if draft else None
            logits = yield ForwardRequest(linear, self.index, draft, draft_kinds)
            if banned:
                logits[:, banned] = float("-inf")
            if self.temperature > 0 and not rules.greedy_phase:
                verdict = verify_sampling(draft, logits, self.temperature, self.generator, max_tokens=budget)
            else:
                verdict = verify_greedy(draft, logits, max_tokens=budget)
            ruling = rules.rule(verdict.tokens, self._argmax_tokens(rules, verdict, logits))
            ruled = cut_verdict(verdict, ruling.n, ruling.last)
            tokens, kinds = ruled.tokens, ruling.kinds
            tree_start = cache.length - (len(draft) if draft else 0)
            cache.commit_path(tree_start, [tree_start + j for j in ruled.accepted])
            for j, k in enumerate(kinds[:-1]):  # drafted nodes were labelled provisionally
                cache.kind[tree_start + j] = k
            # the decoder learns from the model's own verdict (lookahead aligns its window to it), unless a rule
            # forced a token into it: then from what was committed
            self.decoder.observe(history, draft, logits, ruled if ruling.forced else verdict)
            self._record(res, draft, ruled.accepted, tokens)
            res.margins += top2_margins(logits, [0] + [a + 1 for a in ruled.accepted])
            if ruling.in_segment:
                res.asr_forwards += 1
                res.asr_seconds += self.engine.records[-1].seconds
            out += tokens
            history += tokens
            if rules.ended:
                break
            linear = [Segment(torch.tensor(tokens[-1:]), kinds[-1:])]
        self.committed.hold(out[-1:], kinds[-1:])
        parsed = self.protocol.parse(out)
        res.decision = parsed.decision.name.lower() if parsed.decision is not None else None
        res.text, res.tool_call, res.terminator = parsed.text, parsed.tool_call, parsed.terminator
        if rules.opened:
            res.asr, res.asr_forced = self.protocol.decode(rules.transcript), rules.forced
        return res, rules

    @staticmethod
    def _argmax_tokens(rules: UnitRules, verdict: Verdict, logits: torch.Tensor) -> list[int]:
        """The argmax at each of the verdict's positions, which the side channel's rules go by; the verdict's own
        tokens when they are those (greedy, or no side channel to rule on)."""
        if not (rules.sampling and rules.placement is not None):
            return verdict.tokens
        rows = [0] + [a + 1 for a in verdict.accepted]
        return logits[rows].argmax(-1).tolist()

    def _record(self, res: UnitResult, draft: Draft | None, kept: list[int], tokens: list[int]) -> None:
        res.forwards += 1
        res.tokens_per_forward.append(len(tokens))
        res.draft_len.append(len(draft) if draft else 0)
        res.accepted_len.append(len(kept))
        if draft is not None and draft.source:
            src = [draft.source[j] for j in kept]
            res.pool_tokens += sum(s == "pool" for s in src)
            res.runnerup_used |= any(s == "runnerup" for s in src)

    # ------------------------------------------------------------ convenience
    def run(self, chunks: list[np.ndarray], tool_results: dict[int, str] | Callable[[int, UnitResult], str | None] | None = None) -> list[UnitResult]:
        """Step through all chunks; tool results by unit index (dict) or from a callback on the previous unit."""
        results: list[UnitResult] = []
        for i, c in enumerate(chunks):
            if callable(tool_results):
                tr = tool_results(i, results[-1]) if results else None
            else:
                tr = (tool_results or {}).get(i)
            results.append(self.step(c, tr))
        self.flush()
        return results
