"""Sessions on the fast engine (its static path on a CPU) commit exactly what the eager engine does.

Every registered decoder, with tool results, the side channel and a2t eviction; a reused engine
(the benchmark's and server's pool) leaves no trace from one session to the next.
"""

from __future__ import annotations

import pytest
import torch

from ticktock.cache.policies import make_policy
from ticktock.decoding.registry import DECODERS
from ticktock.engine import ENGINES, Engine, FastEngine, borrowed_engine, engine_pool, make_engine
from ticktock.session import CostModelClock, DuplexSession

from conftest import noise_chunks, random_model

NAMES = sorted(DECODERS)
PROFILE = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[30, 30], [30, 30]], "encoder_ms": 1}
TOOLS = {2: "flight JL123 at 9:40, 120 dollars", 4: "sunny"}


def run(model, protocol, name, engine, chunks, **kw):
    sess = DuplexSession(model, protocol, name, clock=CostModelClock(PROFILE), engine=engine, **kw)
    results = sess.run(chunks, TOOLS)
    return [r.tokens for r in results], sess


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_every_decoder_identical_on_fast_and_eager(protocol, name, seed):
    model = random_model(seed, protocol.vocab_size, audio_scale=[1.0, 3.0][seed])
    chunks = noise_chunks(6, seed, speech_units=(1, 3))
    eager, _ = run(model, protocol, "ar", "eager", chunks)
    fast, sess = run(model, protocol, name, "fast", chunks)
    assert isinstance(sess.engine, FastEngine) and sess.engine.fast_forwards > 0
    assert fast == eager


@pytest.mark.parametrize("placement", ["after_decision", "after_content"])
def test_side_channel_and_a2t_eviction_on_fast(protocol, placement):
    model = random_model(2, protocol.vocab_size)
    chunks = noise_chunks(10, 2, speech_units=(1, 2, 5, 6))
    kw = dict(side_channel=placement, max_slots=512)
    eager, es = run(model, protocol, "sl", "eager", chunks, policy=make_policy("a2t", budget=64), **kw)
    fast, fs = run(model, protocol, "sl", "fast", chunks, policy=make_policy("a2t", budget=64), **kw)
    assert fs.engine.cache.version > 1, "a2t never evicted"
    assert fast == eager
    n = es.engine.cache.length
    assert fs.engine.cache.length == n
    assert torch.equal(fs.engine.cache.pos[:n], es.engine.cache.pos[:n])  # positions preserved alike


def test_reused_engine_leaves_no_trace(protocol):
    model = random_model(3, protocol.vocab_size)
    a, b = noise_chunks(5, 3, speech_units=(1,)), noise_chunks(5, 4, speech_units=(2,))
    fresh_b, _ = run(model, protocol, "sl", "fast", b)
    with borrowed_engine(model, "fast", 1024) as eng:
        run(model, protocol, "sl", eng, a)
    with borrowed_engine(model, "fast", 1024) as again:
        assert again is eng  # the pool hands the idle engine back out
        reused_b, _ = run(model, protocol, "sl", again, b)
    assert reused_b == fresh_b
    assert engine_pool(model, "fast", 1024).created == 1


def test_engine_choice(protocol):
    model = random_model(0, protocol.vocab_size)
    assert type(make_engine(model, "eager")) is Engine
    assert type(make_engine(model, "auto")) is Engine  # a CPU model: eager
    fast = make_engine(model, "fast")
    assert isinstance(fast, FastEngine) and fast.mode == "static"
    with pytest.raises(ValueError, match="unknown engine"):
        make_engine(model, "turbo")
    other = random_model(1, protocol.vocab_size)
    with pytest.raises(ValueError, match="another model"):
        DuplexSession(other, protocol, "ar", engine=fast)
    assert set(ENGINES) == {"auto", "eager", "fast"}


@pytest.mark.parametrize("command", ["demo", "eval", "bench", "memory", "serve"])
def test_commands_take_engine(command):
    from ticktock.cli import build_parser

    args = build_parser().parse_args([command, "--engine", "fast", "--dtype", "bfloat16"])
    assert (args.engine, args.dtype) == ("fast", "bfloat16")
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--engine", "turbo"])


def test_graph_capture_summary_only_for_graph_engines(protocol):
    """On a CPU no engine captures graphs, so bench prints no capture line."""
    from ticktock.engine import graph_capture_summary

    model = random_model(3, protocol.vocab_size)
    with borrowed_engine(model, "fast", 512), borrowed_engine(model, "eager", 512):
        pass
    assert graph_capture_summary(model) is None


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_graph_capture_summary_counts_engines_and_their_capture_time(protocol):
    from ticktock.engine import graph_capture_summary

    model = random_model(3, protocol.vocab_size).to("cuda")
    with borrowed_engine(model, "fast", 1024, warm_slots=256), borrowed_engine(model, "fast", 1024, warm_slots=256):
        pass  # two at once: two engines, each captured before its session
    pool = engine_pool(model, "fast", 1024, 256)
    assert pool.created == 2 and pool.capture_seconds > 0
    assert graph_capture_summary(model).startswith("2 graph engine(s) made")
