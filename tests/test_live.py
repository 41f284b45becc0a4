"""Sessions in real time on one device (`bench.live`): the same tokens as the closed loop, arrivals on the clock."""

from __future__ import annotations

import pytest
import torch

from conftest import noise_chunks, random_model
from ticktock.bench.live import RealTimer, SkipTimer, live_loop
from ticktock.bench.report import capacity, capacity_markdown
from ticktock.bench.runner import closed_loop
from ticktock.bench.sample import first_units
from ticktock.decoding.registry import DECODERS
from ticktock.session import CostModelClock, DuplexSession

SYSTEMS = ["You are ticktock, a helpful voice assistant.", "book a flight", "set a timer for ten minutes okay"]
TOOLS = [{}, {2: "flight JL123 at 9:40, 120 dollars", 4: "sunny"}, {}]
LENGTHS = [4, 6, 5]


class VirtualTimer(RealTimer):
    """Time moves only when the device works (`ChargingClock`) or the driver waits: a deterministic schedule."""

    def __init__(self):
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def wait_until(self, t: float) -> None:
        self.t = max(self.t, t)


class ChargingClock(CostModelClock):
    """A cost clock whose every forward and encoder call moves the virtual timer by what it costs."""

    def __init__(self, ms: float, timer: VirtualTimer):
        super().__init__({"new_tokens": [1, 256], "context": [0, 100000], "ms": [[ms, ms], [ms, ms]],
                          "encoder_ms": 1})
        self.timer = timer

    def time_forward(self, run, new_tokens, context):
        out, seconds = super().time_forward(run, new_tokens, context)
        self.timer.t += seconds
        return out, seconds

    def encoder_seconds(self, measured):
        seconds = super().encoder_seconds(measured)
        self.timer.t += seconds
        return seconds


def make_sessions(model, protocol, name, clock):
    return [DuplexSession(model, protocol, name, clock=clock, system=s, engine="eager") for s in SYSTEMS]


def chunks_of(seed: int):
    return [noise_chunks(n, seed + k, speech_units=(1, 3)) for k, n in enumerate(LENGTHS)]


@pytest.mark.parametrize("name", sorted(DECODERS))
@pytest.mark.parametrize("batched, batch_from", [(False, 8), (True, 1), (True, 8)])
def test_live_commits_what_the_closed_loop_commits(protocol, name, batched, batch_from):
    """Every decoder, three sessions of different lengths with tool results: one unit at a time, or in rounds
    (every round one batched forward, or, under 8 units in flight, each unit's forward on its own engine)."""
    model = random_model(2, protocol.vocab_size)
    chunks = chunks_of(2)
    want, _ = closed_loop(make_sessions(model, protocol, "ar", CostModelClock(ChargingClock(30, VirtualTimer()).profile)),
                          chunks, tool_results=TOOLS)
    timer = VirtualTimer()
    got, injected = live_loop(make_sessions(model, protocol, name, ChargingClock(30, timer)), chunks,
                              tool_results=TOOLS, batched=batched, timer=timer, batch_from=batch_from)
    assert [[r.tokens for r in g] for g in got] == [[r.tokens for r in w] for w in want]
    assert injected == TOOLS
    for g in got:
        lag = 0.0
        for r in g:  # b_t = max(0, b_{t-1} + ℓ_t - Δ), on the driver's clock
            lag = max(0.0, lag + r.latency - 1.0)
            assert r.lag == pytest.approx(lag) and r.latency >= r.post_audio - 1e-9 >= 0


def test_a_free_device_starts_every_unit_as_its_chunk_arrives(protocol):
    """Forwards that cost (almost) nothing: unit t of session i of N is ready at i/N + t + 1 seconds and
    waits for nothing; the chunks arrive staggered."""
    model = random_model(0, protocol.vocab_size)
    timer = VirtualTimer()
    got, _ = live_loop(make_sessions(model, protocol, "sl", ChargingClock(0.01, timer)), chunks_of(0), timer=timer)
    for i, g in enumerate(got):
        assert len(g) == LENGTHS[i]
        for t, r in enumerate(g):
            assert r.overflow == 0 and r.lag == 0 and not r.miss
            assert r.latency == pytest.approx(r.post_audio) and r.latency < 0.01
    last_arrival = max(i / 3 + n for i, n in enumerate(LENGTHS))  # session i's chunk t: i/N + t + 1
    assert timer.t == pytest.approx(last_arrival, abs=0.01)


@pytest.mark.parametrize("name", ["ar", "sl"])
@pytest.mark.parametrize("batched", [False, True])
def test_an_overloaded_device_makes_sessions_lag(protocol, name, batched):
    """300 ms a forward for three sessions: units wait behind each other, the lag builds up, idle work is skipped
    (the prefill goes with the audio) and the tokens stay the closed loop's; 1 ms: no lag."""
    model = random_model(1, protocol.vocab_size)
    chunks = chunks_of(1)
    want, _ = closed_loop(make_sessions(model, protocol, "ar", CostModelClock(ChargingClock(30, VirtualTimer()).profile)),
                          chunks)
    results = {}
    for ms in (1, 300):
        timer = VirtualTimer()
        results[ms], _ = live_loop(make_sessions(model, protocol, name, ChargingClock(ms, timer)), chunks,
                                   batched=batched, timer=timer, batch_from=1)
        assert [[r.tokens for r in g] for g in results[ms]] == [[r.tokens for r in w] for w in want]
    assert not any(r.miss for g in results[1] for r in g)
    assert any(r.miss for g in results[300] for r in g)
    assert any(r.overflow > 0 for g in results[300] for r in g)  # a unit waited behind another's work
    late = [r for g in results[300] for r in g if r.window == 0 and r.index > 0]
    assert late and all(r.idle_forwards == 0 for r in late)  # skipped: the prefill rode with the audio


def test_idle_work_gets_a_window_in_the_free_time(protocol):
    """sl drafts before the audio arrives when the device is free, inside the window it was given."""
    model = random_model(0, protocol.vocab_size)
    timer = VirtualTimer()
    got, _ = live_loop(make_sessions(model, protocol, "sl", ChargingClock(10, timer)), chunks_of(0), timer=timer)
    units = [r for g in got for r in g]
    assert all(0 <= r.idle_used and r.window <= 1.0 + 1e-9 for r in units)
    assert sum(r.idle_forwards > 1 for r in units) > len(units) // 2  # drafting happened, not only the prefill


@pytest.mark.parametrize("ms", [20, 60])
def test_idle_work_does_not_hold_units_back(protocol, ms):
    """A loaded device (three sessions of long units, every forward 20 or 60 ms, in rounds): `sl`'s drafting takes
    free time only, so its units wait behind other work about as long as `ar`'s do (within two rounds), however
    long the run — not for its drafting (a round of idle work alone that would still run when a chunk comes
    waits; idle work whose chunk comes within a round runs at once)."""
    model = random_model(0, protocol.vocab_size)
    chunks = [noise_chunks(8, k, speech_units=(1, 3)) for k in range(3)]
    waits = {}
    for name in ("ar", "sl"):
        timer = VirtualTimer()
        got, _ = live_loop(make_sessions(model, protocol, name, ChargingClock(ms, timer)), chunks, timer=timer,
                           batched=True, batch_from=1)
        waits[name] = max(r.overflow for g in got for r in g)
    assert waits["sl"] <= waits["ar"] + 2 * ms / 1000


def test_skip_timer_moves_over_waits_only():
    timer = SkipTimer()
    t0 = timer.now()
    timer.wait_until(t0 + 5.0)
    assert 5.0 <= timer.now() - t0 < 5.5


def test_bad_input_is_refused(protocol):
    model = random_model(0, protocol.vocab_size)
    sessions = make_sessions(model, protocol, "ar", CostModelClock(ChargingClock(1, VirtualTimer()).profile))
    with pytest.raises(ValueError, match="one chunk list per session"):
        live_loop(sessions, chunks_of(0)[:2])


def test_first_units_cuts_entries():
    entries = [{"id": "a", "n_units": 5, "units": [{"decision": "listen"}] * 5}, {"id": "b", "n_units": 2}]
    cut = first_units(entries, 3)
    assert [(e["n_units"], len(e["units"])) for e in cut] == [(3, 3), (2, 0)]
    assert entries[0]["n_units"] == 5  # the originals are left alone
    with pytest.raises(ValueError):
        first_units(entries, 0)


def test_capacity_is_the_largest_n_up_to_which_nothing_failed():
    ok = {"deadline_miss_rate": 0.0, "lagging_sessions": 0.0}
    bad = {"deadline_miss_rate": 0.01, "lagging_sessions": 0.0}
    sweep = {"1": {"ar": ok, "sl": ok}, "4": {"ar": bad, "sl": ok}, "8": {"ar": ok, "sl": bad}}
    assert capacity(sweep, "ar") == 1 and capacity(sweep, "sl") == 4
    assert capacity({"1": {"ar": bad}}, "ar") is None
    assert "ar none (it failed at N = 4), sl N = 4" in capacity_markdown({"4": {"ar": bad, "sl": ok}})


def test_a_live_replay_records_what_the_simulated_one_does(protocol):
    """`replay(..., live=...)` (real waits: three one-second units) warms up, then commits the simulated replay's
    tokens; every unit of every decoder is there once."""
    from ticktock.bench.replay import BenchSession, replay

    model = random_model(5, protocol.vocab_size)
    group = [BenchSession(f"syn{k}", "short_qa", SYSTEMS[k], noise_chunks(3, seed=k, speech_units=(1,)))
             for k in range(2)]
    kw = dict(tool_runner=None, concurrent=2)
    simulated = replay(model, protocol, group, ["sl"], CostModelClock(ChargingClock(1, VirtualTimer()).profile), **kw)
    live = replay(model, protocol, group, ["sl"], lambda: CostModelClock(ChargingClock(1, VirtualTimer()).profile),
                  live="batched", **kw)
    key = lambda r: (r["decoder"], r["session"], r["unit"])  # noqa: E731
    a, b = {key(r): r for r in simulated}, {key(r): r for r in live}
    assert a.keys() == b.keys() and len(b) == len(live) == 2 * 2 * 3
    assert all(a[k]["tokens"] == b[k]["tokens"] for k in a)
    assert all(r["lag_ms"] >= 0 and r["latency_ms"] >= 0 for r in live)


@pytest.mark.parametrize("side_channel", [None, "after_content"])
def test_skipping_idle_work_puts_the_same_slots_in_the_cache(protocol, side_channel):
    """`skip_idle_work` before each unit: the prefill rides with the audio, one forward fewer a unit, the same
    tokens and the same cache ledger (positions, kinds, units) as idle work done on its own."""
    model = random_model(4, protocol.vocab_size)
    clock = CostModelClock(ChargingClock(30, VirtualTimer()).profile)
    chunks = noise_chunks(5, 4, speech_units=(1, 3))
    usual, skipping = (DuplexSession(model, protocol, "ar", clock=clock, side_channel=side_channel,
                                     engine="eager") for _ in range(2))
    for c in chunks:
        a = usual.step(c)
        skipping.skip_idle_work()
        b = skipping.step(c)
        assert b.sequence == a.sequence
    usual.flush()
    skipping.flush()
    ledger_a, ledger_b = usual.engine.cache.ledger(), skipping.engine.cache.ledger()
    assert ledger_a.keys() == ledger_b.keys()
    for key in ledger_a:
        assert torch.equal(ledger_a[key], ledger_b[key]), key
    assert len(usual.engine.records) - len(skipping.engine.records) == len(chunks)  # one prefill forward a unit
