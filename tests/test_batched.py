"""Batched forwards across sessions: each session in a batch computes and commits what it would alone."""

from __future__ import annotations

import pytest
import torch

from conftest import noise_chunks, random_model, steer_greedy
from ticktock.bench.replay import BenchSession, replay
from ticktock.cache.policies import make_policy
from ticktock.decoding.draft import Draft
from ticktock.decoding.registry import DECODERS
from ticktock.engine import BatchedEngine, Engine, ForwardRequest, Segment, batched_forward
from ticktock.protocol import DuplexProtocol, SlotKind
from ticktock.session import BatchedSessions, CostModelClock, DuplexSession

NAMES = sorted(DECODERS)
# The fixed cost per forward of tests/test_decoders.py: idle windows hold about 30 draft forwards.
PROFILE = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[30, 30], [30, 30]], "encoder_ms": 1}
# Cost growing with new tokens and context, so a session's charge depends on its own rows.
SLOPED = {"new_tokens": [1, 256], "context": [0, 4096], "ms": [[10, 60], [20, 90]], "encoder_ms": 1}
SYSTEMS = ["You are ticktock, a helpful voice assistant.", "book a flight", "set a timer for ten minutes okay"]
TOOLS = [{}, {2: "flight JL123 at 9:40, 120 dollars", 4: "sunny"}, {}]  # tool results in session 1 only
LENGTHS = [4, 6, 5]


def ids(protocol, text: str, kind: SlotKind = SlotKind.TEXT) -> Segment:
    t = protocol.tokenizer.encode(text).ids
    return Segment(torch.tensor(t, dtype=torch.long), [int(kind)] * len(t))


def twin_engines(model, protocol, systems: list[str]) -> tuple[list[Engine], list[Engine]]:
    """Two identical engines per history (a system prefix, a few tokens): one for solo forwards, one for the batch."""
    solo, batch = [], []
    for k, text in enumerate(systems):
        pair = [Engine(model, max_slots=256) for _ in range(2)]
        prefix = protocol.prefix_ids(text)
        for e in pair:
            e.forward([Segment(torch.tensor(prefix), [int(SlotKind.PREFIX)] * len(prefix))], unit=-1)
            e.forward([ids(protocol, "okay uh-huh sure", SlotKind.TEXT)], unit=0)
            if k == 1:  # a compacted cache: survivors keep their logical positions, gaps included
                e.cache.evict([2, 3, 5])
        solo.append(pair[0])
        batch.append(pair[1])
    return solo, batch


def requests(model, protocol) -> list[ForwardRequest]:
    d = model.cfg.decoder.hidden_size
    audio = torch.randn(10, d, generator=torch.Generator().manual_seed(0))
    return [
        # audio + a tool result + transcript tokens (each kind reaches the ledger)
        ForwardRequest([Segment(audio, [int(SlotKind.AUDIO)] * 10), ids(protocol, "sunny", SlotKind.TOOL_RESULT),
                        ids(protocol, "one two", SlotKind.ASR)], unit=1),
        # one token + a draft tree: two branches of two nodes
        ForwardRequest([ids(protocol, "okay")], unit=1, draft=Draft([5, 7, 9, 11], [-1, 0, -1, 2]),
                       draft_kinds=[int(SlotKind.TEXT), int(SlotKind.ASR), int(SlotKind.TEXT), int(SlotKind.TEXT)]),
        # a few linear tokens, causal
        ForwardRequest([ids(protocol, "the weather in oslo")], unit=1),
    ]


@pytest.mark.parametrize("variant", ["plain", "qk_norm"])
def test_batched_forward_equals_per_session_forwards(protocol, variant):
    if variant == "qk_norm":  # Qwen3's per-head q/k RMSNorm
        from ticktock.model import DuplexLM, preset

        cfg = preset("test")
        if not hasattr(cfg.decoder, "qk_norm"):
            pytest.skip("this decoder has no QK-norm")
        cfg.decoder.vocab_size, cfg.decoder.qk_norm = protocol.vocab_size, True
        torch.manual_seed(0)
        model = DuplexLM(cfg).eval()
        with torch.no_grad():
            for name, w in model.lm.named_parameters():
                w.normal_(1.0 if name.endswith("norm.weight") else 0.0, 0.5)
    else:
        model = random_model(0, protocol.vocab_size)
    solo, batch = twin_engines(model, protocol, SYSTEMS)
    reqs = requests(model, protocol)
    want = [e.forward(r.linear, r.unit, r.draft, r.draft_kinds) for e, r in zip(solo, reqs)]
    got = batched_forward(model, [e.cache for e in batch], reqs)
    assert [g.shape for g in got] == [w.shape for w in want] == [(1, protocol.vocab_size), (5, protocol.vocab_size),
                                                                 (1, protocol.vocab_size)]
    for s, b, w, g in zip(solo, batch, want, got):
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5)
        assert (b.cache.length, b.cache.next_pos) == (s.cache.length, s.cache.next_pos)
        for key, led in s.cache.ledger().items():
            assert torch.equal(b.cache.ledger()[key], led), key
        n = s.cache.length
        # fp32 rounding only: attention over the padded batch sums in another order than a session's own forward
        torch.testing.assert_close(b.cache.k[:, :, :, :n], s.cache.k[:, :, :, :n], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(b.cache.v[:, :, :, :n], s.cache.v[:, :, :, :n], atol=1e-5, rtol=1e-5)


def test_batched_forward_of_one_session_is_the_engine_forward(protocol):
    model = random_model(1, protocol.vocab_size)
    solo, batch = twin_engines(model, protocol, SYSTEMS[:1])
    req = requests(model, protocol)[0]
    want = solo[0].forward(req.linear, req.unit)
    got = batched_forward(model, [batch[0].cache], [req])[0]
    assert torch.equal(got, want)
    n = solo[0].cache.length
    assert torch.equal(batch[0].cache.k[:, :, :, :n], solo[0].cache.k[:, :, :, :n])


def test_batched_engine_records(protocol):
    """Per session: what the profile says for its own rows; per batch: the batch's rows and contexts."""
    model = random_model(0, protocol.vocab_size)
    _, engines = twin_engines(model, protocol, SYSTEMS)
    clock = CostModelClock(SLOPED)
    for e in engines:
        e.clock = clock
    reqs = requests(model, protocol)
    before = [e.cache.length for e in engines]
    batch = BatchedEngine(model)
    batch.forward(engines, reqs)
    n_new = [r.new_tokens for r in reqs]
    ctx = [b + n for b, n in zip(before, n_new)]
    (rec,) = batch.records
    assert rec.new_tokens == n_new and rec.context == ctx and rec.sessions == 3
    assert rec.seconds == pytest.approx(clock.cost(sum(n_new), sum(ctx)))
    for e, n, c in zip(engines, n_new, ctx):
        assert (e.records[-1].new_tokens, e.records[-1].context) == (n, c)
        assert e.records[-1].seconds == pytest.approx(clock.cost(n, c))


def test_batch_rejects_a_shared_cache(protocol):
    model = random_model(0, protocol.vocab_size)
    eng = Engine(model, max_slots=64)
    req = ForwardRequest([ids(protocol, "okay")], unit=0)
    with pytest.raises(AssertionError, match="own cache"):
        batched_forward(model, [eng.cache, eng.cache], [req, req])


# ------------------------------------------------------------ sessions in a batch


def sessions(model, protocol, name, policies=(None, None, None), side_channel=None, clock=PROFILE):
    return [DuplexSession(model, protocol, name, clock=CostModelClock(clock), system=s, policy=p,
                          side_channel=side_channel, engine="eager")
            for s, p in zip(SYSTEMS, policies)]


def all_chunks(seed: int) -> list[list]:
    return [noise_chunks(n, seed + k, speech_units=(1, 3)) for k, n in enumerate(LENGTHS)]


def alone(model, protocol, name, chunks, **kw) -> list[tuple[DuplexSession, list]]:
    out = []
    for k, sess in enumerate(sessions(model, protocol, name, **kw)):
        out.append((sess, sess.run(chunks[k], TOOLS[k])))
    return out


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 2])
def test_every_decoder_is_lossless_per_session_in_a_batch(protocol, name, seed):
    """Three sessions (different lengths, system prompts, tool results) in one batch: each commits what it
    commits alone with `ar`, with the forwards and the session-clock timing it has alone with `name`."""
    model = random_model(seed, protocol.vocab_size, audio_scale=[0.0, 1.0, 3.0][seed])
    chunks = all_chunks(seed)
    ar = alone(model, protocol, "ar", chunks)
    own = ar if name == "ar" else alone(model, protocol, name, chunks)
    live = sessions(model, protocol, name)
    driver = BatchedSessions(live)
    got = driver.run(chunks, TOOLS)
    assert [len(g) for g in got] == LENGTHS
    for k, (g, (_, a), (_, o)) in enumerate(zip(got, ar, own)):
        assert [r.tokens for r in g] == [r.tokens for r in a], f"session {k}"
        assert [r.forwards for r in g] == [r.forwards for r in o], f"session {k}"
        assert [r.post_audio for r in g] == pytest.approx([r.post_audio for r in o])
        assert [r.latency for r in g] == pytest.approx([r.latency for r in o])
    # rounds: every session of the step in the first one, those still decoding after it
    step = driver.last
    assert step.rounds[0].sessions == len([n for n in LENGTHS if n == max(LENGTHS)])
    assert [r.sessions for r in step.rounds] == sorted((r.sessions for r in step.rounds), reverse=True)


@pytest.mark.parametrize("name", ["ar", "pld", "sl"])
@pytest.mark.parametrize("placement", ["after_decision", "after_content"])
def test_side_channel_sessions_in_a_batch(protocol, name, placement):
    """Inline segments and trailing ones."""
    p = DuplexProtocol(protocol.tokenizer, max_unit_tokens=24, max_asr_tokens=2)
    shares = {"speak": 0.3, "listen": 0.1, "asr_start": 0.3, "asr_end": 0.1, "chunk_eos": 0.05}
    model = steer_greedy(random_model(1, p.vocab_size), p, shares, seed=1)
    chunks = all_chunks(1)
    ar = alone(model, p, "ar", chunks, side_channel=placement)
    got = BatchedSessions(sessions(model, p, name, side_channel=placement)).run(chunks, TOOLS)
    assert any(r.asr is not None for _, a in ar for r in a), "the steered model should open segments"
    for g, (_, a) in zip(got, ar):
        assert [r.sequence for r in g] == [r.sequence for r in a]


def test_sessions_holding_fast_engines_batch_on_their_caches(protocol):
    """A `FastEngine` (its static path on a CPU) drafts per session; the batch runs the eager path on its cache."""
    model = random_model(0, protocol.vocab_size)
    chunks = all_chunks(0)
    ar = alone(model, protocol, "ar", chunks)
    live = [DuplexSession(model, protocol, "sl", clock=CostModelClock(PROFILE), system=s, engine="fast")
            for s in SYSTEMS]
    got = BatchedSessions(live).run(chunks, TOOLS)
    assert all(s.engine.fast_forwards > 0 for s in live)
    assert [[r.tokens for r in g] for g in got] == [[r.tokens for r in a] for _, a in ar]


@pytest.mark.parametrize("name", ["ar", "sl"])
def test_sampling_sessions_in_a_batch_draw_what_they_draw_alone(protocol, name):
    """Each session samples with its own generator (seeded per session), batched or not."""
    model = random_model(3, protocol.vocab_size)
    chunks = all_chunks(3)

    def make():
        return [DuplexSession(model, protocol, name, clock=CostModelClock(PROFILE), system=s, temperature=0.8,
                              seed=10 + k, engine="eager") for k, s in enumerate(SYSTEMS)]

    solo = [s.run(c, t) for s, c, t in zip(make(), chunks, TOOLS)]
    got = BatchedSessions(make()).run(chunks, TOOLS)
    assert [[r.tokens for r in g] for g in got] == [[r.tokens for r in s] for s in solo]


@pytest.mark.parametrize("policy", ["a2t", "streaming_llm"])
def test_eviction_in_one_session_leaves_the_others_alone(protocol, policy):
    p = DuplexProtocol(protocol.tokenizer, max_unit_tokens=6)
    model = random_model(0, p.vocab_size)
    chunks = [noise_chunks(12, k, speech_units=tuple(range(0, 12, 3))) for k in range(3)]
    policies = (None, make_policy(policy, budget=60), None)
    tools = [{}, {}, {}]
    solo = []
    for k, sess in enumerate(sessions(model, p, "sl", policies)):
        solo.append((sess, sess.run(chunks[k], tools[k])))
    live = sessions(model, p, "sl", (None, make_policy(policy, budget=60), None))
    got = BatchedSessions(live).run(chunks, tools)
    evicting = live[1].engine.cache
    assert evicting.length < evicting.next_pos, f"{policy} never evicted"
    for k, (sess, g, (ref, r)) in enumerate(zip(live, got, solo)):
        assert [u.tokens for u in g] == [u.tokens for u in r], f"session {k}"
        assert [u.resident_slots for u in g] == [u.resident_slots for u in r], f"session {k}"
        c, rc = sess.engine.cache, ref.engine.cache
        assert (c.length, c.next_pos) == (rc.length, rc.next_pos)
        for key, led in rc.ledger().items():
            assert torch.equal(c.ledger()[key], led), (k, key)
        # equal to rounding: 12 units of fp32 GEMMs over other row counts (one forward: 1e-6, test above)
        torch.testing.assert_close(c.k[:, :, :, :c.length], rc.k[:, :, :, :rc.length], atol=1e-4, rtol=1e-4)
        if k != 1:
            assert c.length == c.next_pos, "a session without a policy keeps every slot"


def test_tool_results_reach_only_their_session(protocol):
    model = random_model(2, protocol.vocab_size)
    chunks = all_chunks(2)
    live = sessions(model, protocol, "sl")
    BatchedSessions(live).run(chunks, TOOLS)
    held = [int((s.engine.cache.kind[: s.engine.cache.length] == int(SlotKind.TOOL_RESULT)).sum()) for s in live]
    want = sum(len(protocol.tool_result_ids(t)) for t in TOOLS[1].values())
    assert held == [0, want, 0]


def test_a_bad_chunk_is_refused_before_any_session_moves(protocol):
    model = random_model(0, protocol.vocab_size)
    live = sessions(model, protocol, "ar")
    driver = BatchedSessions(live)
    good = noise_chunks(1)[0]
    with pytest.raises(ValueError, match="samples"):
        driver.step([good, good[:100], good])
    assert all(s.index == 0 and s.prepared is None for s in live)


# ------------------------------------------------------------ the benchmark's shared device


def test_replay_batched_keeps_tokens_and_shortens_the_queue(protocol):
    model = random_model(5, protocol.vocab_size)
    group = [BenchSession(f"syn{k}", "short_qa", SYSTEMS[k], noise_chunks(n, seed=k, speech_units=(1,)))
             for k, n in enumerate(LENGTHS)]
    kw = dict(tool_runner=None, concurrent=3)
    serial = replay(model, protocol, group, ["sl"], CostModelClock(SLOPED), **kw)
    batched = replay(model, protocol, group, ["sl"], CostModelClock(SLOPED), batched=True, **kw)
    key = lambda r: (r["decoder"], r["session"], r["unit"])  # noqa: E731
    a, b = {key(r): r for r in serial}, {key(r): r for r in batched}
    assert a.keys() == b.keys()
    assert all(a[k]["tokens"] == b[k]["tokens"] for k in a)  # (drafting windows differ: more free time)
    for d in ("ar", "sl"):
        last = [k for k in a if k[0] == d and k[1] == "syn2"]  # queued behind the two others when serial
        assert sum(b[k]["latency_ms"] for k in last) < sum(a[k]["latency_ms"] for k in last)
        for k in a:
            if k[0] == d:  # a session's latency covers at least its own encoder and forwards
                assert b[k]["latency_ms"] >= b[k]["post_audio_ms"] * 0.999


def test_device_timeline_accounts_a_batch_by_rounds():
    """Encoders first, then the rounds; a session's unit ends with the last round it was in."""
    from ticktock.bench.device_timeline import DeviceTimeline, SessionClock
    from ticktock.engine import BatchRecord
    from ticktock.session import BatchStep, UnitResult

    dev = DeviceTimeline(1.0, clocks=[SessionClock(), SessionClock()])
    step = BatchStep([BatchRecord([11, 11], [50, 60], 0.1), BatchRecord([1], [62], 0.05)], {0: 0, 1: 1},
                     {0: 0.001, 1: 0.001})
    res = {0: UnitResult(0, "listen", [1]), 1: UnitResult(0, "speak", [2, 3])}
    dev.chunk_batch(0, res, step)
    assert res[0].latency == pytest.approx(0.102) and res[1].latency == pytest.approx(0.152)
    assert dev.free == pytest.approx(1.152) and res[1].lag == 0.0
