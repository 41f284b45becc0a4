"""SessionGraphs: every session of a fixed set in one forward (a CUDA graph per shape on a GPU; eagerly here).
Each session asked computes what its own forward computes; the others' caches keep what they hold."""

from __future__ import annotations

import pytest
import torch
from conftest import random_model
from test_batched import SYSTEMS, ids, requests, twin_engines
from test_live import TOOLS, ChargingClock, VirtualTimer, chunks_of, make_sessions

from ticktock.bench.live import live_loop
from ticktock.bench.runner import closed_loop
from ticktock.decoding.registry import DECODERS
from ticktock.engine import BatchedEngine, ForwardRequest, SessionGraphs, session_graphs
from ticktock.engine.session_graphs import ROWS
from ticktock.session import CostModelClock


def _state(cache):
    n = cache.length
    return n, cache.next_pos, {k: v.clone() for k, v in cache.ledger().items()}, cache.k[:, :, :, :n].clone()


@pytest.mark.parametrize("asked", [(0, 1, 2), (0, 2), (1,)])
def test_sessions_asked_compute_their_own_forward_and_the_rest_keep_their_caches(protocol, asked):
    model = random_model(0, protocol.vocab_size)
    solo, batch = twin_engines(model, protocol, SYSTEMS)
    reqs = requests(model, protocol)  # audio + tool result + transcript; a draft tree; linear tokens
    graphs = SessionGraphs(model, [e.cache for e in batch], capture=False)
    before = {i: _state(batch[i].cache) for i in range(3) if i not in asked}
    got = graphs.forward({i: reqs[i] for i in asked})
    assert sorted(got) == sorted(asked) and graphs.forwards == 1
    for i in asked:
        r = reqs[i]
        want = solo[i].forward(r.linear, r.unit, r.draft, r.draft_kinds)
        torch.testing.assert_close(got[i], want, atol=1e-5, rtol=1e-5)
        s, b = solo[i].cache, batch[i].cache
        assert (b.length, b.next_pos) == (s.length, s.next_pos)
        for key, led in s.ledger().items():
            assert torch.equal(b.ledger()[key], led), key
        n = s.length
        torch.testing.assert_close(b.k[:, :, :, :n], s.k[:, :, :, :n], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(b.v[:, :, :, :n], s.v[:, :, :, :n], atol=1e-5, rtol=1e-5)
    for i, (n, nxt, led, k) in before.items():  # pads went past its resident slots only
        c = batch[i].cache
        assert (c.length, c.next_pos) == (n, nxt) and torch.equal(c.k[:, :, :, :n], k)
        assert all(torch.equal(c.ledger()[key], v) for key, v in led.items())


def test_what_does_not_fit_is_left_to_the_caller(protocol, monkeypatch):
    model = random_model(1, protocol.vocab_size)
    _, batch = twin_engines(model, protocol, SYSTEMS)
    caches = [e.cache for e in batch]
    graphs = SessionGraphs(model, caches, capture=False)
    words = " ".join(["okay"] * 40)
    long = ForwardRequest([ids(protocol, words)], unit=1)  # more rows than a session's bucket holds
    short = ForwardRequest([ids(protocol, "okay")], unit=1)
    assert long.new_tokens > ROWS[-1]
    lengths = [c.length for c in caches]
    assert graphs.shape([caches[0]], [long]) is None and graphs.forward({0: long}) is None
    assert [c.length for c in caches] == lengths  # nothing done
    assert graphs.take(caches[:2], [long, short]) == [1]
    # too many rows together (with room for 32): the smallest go first
    monkeypatch.setattr(session_graphs, "MAX_ROWS", 32)
    mid = ForwardRequest([ids(protocol, " ".join(["okay"] * 20))], unit=1)
    assert graphs.take(caches, [mid, short, mid]) == [0, 1]
    monkeypatch.undo()
    # a BatchedEngine holding the graphs runs what does not fit its eager way
    engine = BatchedEngine(model, graphs=graphs)
    out = engine.forward([batch[0], batch[1]], [long, short])
    assert [o.shape[0] for o in out] == [1, 1] and graphs.forwards == 0
    with pytest.raises(ValueError, match="distinct cache"):
        SessionGraphs(model, [caches[0], caches[0]], capture=False)


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_live_rounds_through_session_graphs_commit_the_closed_loops_tokens(protocol, name, monkeypatch):
    ran = []
    forward = SessionGraphs.forward
    monkeypatch.setattr(SessionGraphs, "forward", lambda self, r: ran.append(len(r)) or forward(self, r))
    model = random_model(2, protocol.vocab_size)
    chunks = chunks_of(2)
    want, _ = closed_loop(make_sessions(model, protocol, "ar", CostModelClock(ChargingClock(30, VirtualTimer()).profile)),
                          chunks, tool_results=TOOLS)
    timer = VirtualTimer()
    got, _ = live_loop(make_sessions(model, protocol, name, ChargingClock(30, timer)), chunks, tool_results=TOOLS,
                       batched=True, timer=timer, session_graphs=True)
    assert [[r.tokens for r in g] for g in got] == [[r.tokens for r in w] for w in want]
    assert ran and max(ran) >= 2  # rounds of several units went through the graphs


def test_idle_work_of_several_sessions_joins_the_rounds(protocol, monkeypatch):
    """sl's drafting goes through the rounds: alongside units' forwards in one replay, and several sessions' at once."""
    from ticktock.bench import live

    rounds = []
    real_round = live._round

    def spy(engine, engines, requests, n_chunk, batch_from):
        out = real_round(engine, engines, requests, n_chunk, batch_from)
        rounds.append((n_chunk, sum(z is not None for z in out[n_chunk:])))
        return out

    monkeypatch.setattr(live, "_round", spy)
    model = random_model(2, protocol.vocab_size)
    timer = VirtualTimer()
    got, _ = live_loop(make_sessions(model, protocol, "sl", ChargingClock(30, timer)), chunks_of(2),
                       tool_results=TOOLS, batched=True, timer=timer, session_graphs=True)
    assert any(n_chunk and idle for n_chunk, idle in rounds)  # idle forwards in a replay with units' forwards
    assert any(not n_chunk and idle >= 2 for n_chunk, idle in rounds)  # several sessions' idle work at once
    assert all(r.idle_forwards > 0 for g in got for r in g[1:])  # every unit after the first was drafted for
