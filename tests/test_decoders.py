"""Every decoder is token-identical to autoregressive greedy decoding (add a decoder = add one line)."""

from __future__ import annotations

import numpy as np
import pytest

from ticktock.decoding.base import AutoregressiveDecoder
from ticktock.decoding.idle import IdleContext
from ticktock.decoding.registry import DECODERS
from ticktock.protocol import DuplexProtocol, SlotKind
from ticktock.session import CostModelClock, DuplexSession

from conftest import noise_chunks, random_model, steer_greedy

# Every registered decoder is in the matrix; a new decoder is tested by registering it.
NAMES = sorted(DECODERS)
# A fixed cost per forward makes the idle window hold about 30 draft forwards, deterministically.
PROFILE = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[30, 30], [30, 30]], "encoder_ms": 1}


def run(model, protocol, name, chunks, tools=None, side_channel=None):
    sess = DuplexSession(model, protocol, name, clock=CostModelClock(PROFILE), side_channel=side_channel)
    return sess.run(chunks, tools)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_greedy_lossless(protocol, name, seed):
    model = random_model(seed, protocol.vocab_size, audio_scale=[0.0, 1.0, 3.0, 0.3][seed])
    chunks = noise_chunks(6, seed, speech_units=(1, 3))
    tools = {2: "flight JL123 at 9:40, 120 dollars", 4: "sunny"}
    ar = run(model, protocol, "ar", chunks, tools)
    got = run(model, protocol, name, chunks, tools)
    assert [r.tokens for r in got] == [r.tokens for r in ar]
    for a, g in zip(ar, got):
        assert g.forwards <= a.forwards, f"unit {a.index}: {name} used more post-audio forwards than ar"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("placement", ["after_decision", "after_content"])
def test_greedy_lossless_with_side_channel(protocol, name, placement):
    """Segments opened, filled and force-closed by the rules: still token-identical to ar."""
    p = DuplexProtocol(protocol.tokenizer, max_unit_tokens=24, max_asr_tokens=2)
    shares = {"speak": 0.3, "listen": 0.1, "asr_start": 0.3, "asr_end": 0.1, "chunk_eos": 0.05}
    model = steer_greedy(random_model(1, p.vocab_size), p, shares, seed=1)
    chunks = noise_chunks(6, 1)
    tools = {2: "flight JL123 at 9:40"}
    ar = run(model, p, "ar", chunks, tools, placement)
    got = run(model, p, name, chunks, tools, placement)
    assert any(r.asr is not None for r in ar), "the steered model should open segments"
    if placement == "after_content":  # the steered model wants delimiters everywhere; the response bans them
        assert not {p.id("asr_start"), p.id("asr_end")} & {t for r in ar for t in r.tokens}
    assert [r.sequence for r in got] == [r.sequence for r in ar]
    for a, g in zip(ar, got):
        assert g.forwards <= a.forwards, f"unit {a.index}: {name} used more post-audio forwards than ar"


class IdleProbe(AutoregressiveDecoder):
    """Idle work through the context alone: the silence hypothesis and one token on a fork."""

    def __init__(self):
        self.seen: list[tuple] = []

    def prepare(self, ctx: IdleContext, window: float) -> float:
        before = (ctx.cache.length, ctx.cache.next_pos)
        with ctx.fork():
            ctx.forward_ids([int(ctx.forward_silence().argmax())], SlotKind.TEXT)
            grown = ctx.cache.length
        self.seen.append((ctx.unit, before, grown, (ctx.cache.length, ctx.cache.next_pos)))
        return ctx.seconds()


def test_idle_work_runs_on_a_fork_of_the_unit_about_to_be_decoded(protocol):
    """`prepare(ctx, window)`: forwards at unit `ctx.unit`, timed by the context, gone from the cache after the fork."""
    model = random_model(3, protocol.vocab_size)
    chunks = noise_chunks(3, 3)
    probe = IdleProbe()
    got = run(model, protocol, probe, chunks)
    assert [r.tokens for r in got] == [r.tokens for r in run(model, protocol, "ar", chunks)]
    assert [u for u, *_ in probe.seen] == [0, 1, 2]
    for _, before, grown, after in probe.seen:
        assert after == before and grown > before[0]
    assert all(r.idle_forwards == 3 and r.idle_used == pytest.approx(0.090) for r in got)  # `<unit>` + the probe's 2


def test_sl_all_accepted_when_audio_is_ignored(protocol):
    """Audio weights at zero: the silence hypothesis is exact, so each unit takes one post-audio forward."""
    model = random_model(7, protocol.vocab_size, audio_scale=0.0)
    sl = run(model, protocol, "sl", noise_chunks(5, 7))
    assert all(r.forwards == 1 for r in sl)
    assert sum(len(r.tokens) for r in sl) > len(sl)  # and units are not trivially one token


def test_sl_long_unit_beyond_idle_window(protocol):
    """A window too short to draft the whole unit: drafting stops, the rest is decoded after the audio."""
    model = random_model(8, protocol.vocab_size, audio_scale=0.0)
    slow = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[300, 300], [300, 300]], "encoder_ms": 1}
    chunks = noise_chunks(3, 8)
    ar = DuplexSession(model, protocol, "ar", clock=CostModelClock(slow)).run(chunks)
    sl = DuplexSession(model, protocol, "sl", clock=CostModelClock(slow)).run(chunks)
    assert [r.tokens for r in sl] == [r.tokens for r in ar]
    assert any(r.forwards > 1 for r in sl)


def test_sl_draft_rejected_when_audio_dominates(protocol):
    model = random_model(9, protocol.vocab_size, audio_scale=5.0)
    chunks = [np.random.default_rng(i).standard_normal(16000).astype(np.float32) * 0.5 for i in range(4)]
    ar = run(model, protocol, "ar", chunks)
    sl = run(model, protocol, "sl", chunks)
    assert [r.tokens for r in sl] == [r.tokens for r in ar]
