"""Session tests: streaming equivalence with the offline oracle, tool results, timeline, clocks."""

from __future__ import annotations

import numpy as np
import pytest

from ticktock.session import CostModelClock, DuplexSession
from ticktock.session.reference import reference_greedy

from conftest import noise_chunks, random_model


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_streaming_equals_offline_greedy(protocol, seed):
    model = random_model(seed, protocol.vocab_size)
    chunks = noise_chunks(5, seed)
    tools = {3: "flight JL123 at 9:40"}
    sess = DuplexSession(model, protocol, "ar")
    got = [r.tokens for r in sess.run(chunks, tools)]
    assert got == reference_greedy(model, protocol, chunks, tools)
    assert any(len(t) > 1 for t in got), "the random model should produce some multi-token units"


def test_new_audio_never_changes_committed_output(protocol, tiny_model):
    chunks = noise_chunks(4, 3)
    a = [r.tokens for r in DuplexSession(tiny_model, protocol).run(chunks)]
    other = chunks[:2] + [np.zeros(16000, np.float32), chunks[3] * 5]
    b = [r.tokens for r in DuplexSession(tiny_model, protocol).run(other)]
    assert a[:2] == b[:2]


def test_units_respect_token_cap(protocol, tiny_model):
    sess = DuplexSession(tiny_model, protocol)
    for r in sess.run(noise_chunks(4, 4)):
        assert 1 <= len(r.tokens) <= protocol.max_unit_tokens
        assert r.forwards == len(r.tokens)  # autoregressive: one token per forward


def test_bad_chunk_is_refused(protocol, tiny_model):
    with pytest.raises(ValueError, match="16000 samples"):
        DuplexSession(tiny_model, protocol).step(np.zeros(100, np.float32))


def test_cost_clock_timeline(protocol, tiny_model):
    prof = {"new_tokens": [1, 128], "context": [0, 4096], "ms": [[10, 20], [10, 20]], "encoder_ms": 5}
    sess = DuplexSession(tiny_model, protocol, clock=CostModelClock(prof))
    res = sess.run(noise_chunks(3, 5))
    for r in res:
        assert r.post_audio == pytest.approx(0.005 + 0.010 * r.forwards + 0.010 * 10 / 127 * (r.forwards > 0), rel=0.2)
        assert r.latency >= r.post_audio - 1e-9
    lag = 0.0
    for r in res:  # b_t = max(0, b_{t-1} + l_t - delta)
        lag = max(0.0, lag + r.latency - 1.0)
        assert r.lag == pytest.approx(lag) and r.miss == (lag > 1e-9)
