"""Engine upkeep in idle time: a graph engine captures, one per idle window, the graphs its coming forwards need.

On a CPU no graph is captured; the capture is stood in for (it records what it was asked) so the choice of graphs,
the budget and the session's call are checked here; GPU runs capture for real.
"""

from __future__ import annotations

import pytest
import torch

from ticktock.engine import Engine, Segment
from ticktock.engine.fast import FastEngine, length_bucket
from ticktock.model import DuplexLM, preset


class StandInGraphs(FastEngine):
    """The static path on a CPU, with `_capture` recording (tb, lb) instead of capturing a CUDA graph (forwards
    run the static path)."""

    uses_graphs = True

    def __init__(self, *a, **kw):
        super().__init__(*a, mode="static", **kw)
        self.captured: list[tuple[int, int]] = []

    def _capture(self, tb, lb):
        self.captured.append((tb, lb))
        return None, torch.zeros(1)

    def _run(self, tb, lb):  # forwards run the static path itself
        return self._static(tb, lb)


def model() -> DuplexLM:
    torch.manual_seed(0)
    return DuplexLM(preset("test")).eval()


def prefill(eng: Engine, n: int) -> None:
    eng.forward([Segment(torch.randint(0, 100, (n,)), [0] * n)], unit=0)


def test_the_eager_engine_and_a_graphless_one_have_no_upkeep():
    m = model()
    for eng in (Engine(m, 512), FastEngine(m, 512, mode="static")):
        prefill(eng, 20)
        assert eng.upkeep(1.0) == 0.0
    assert FastEngine(m, 512, mode="static").graphs == {}


def test_upkeep_captures_the_nearest_missing_graph_and_leaves_the_cache_alone():
    m = model()
    eng = StandInGraphs(m, 1024)
    prefill(eng, 100)
    k, v, length, ledger = eng.cache.k.clone(), eng.cache.v.clone(), eng.cache.length, eng.cache.next_pos
    assert eng.missing_ahead()[0] == (100, 1)
    assert eng.upkeep(0.0) == 0.0 and eng.captured == []  # no slack, no capture
    spent = eng.upkeep(1.0)
    assert eng.captured == [(1, length_bucket(101, 1024))] and spent > 0 and eng.capture_seconds == spent
    assert torch.equal(eng.cache.k, k) and torch.equal(eng.cache.v, v)
    assert (eng.cache.length, eng.cache.next_pos) == (length, ledger)
    assert eng.upkeep(spent / 2) == 0.0 and len(eng.captured) == 1  # the last capture's time does not fit


def test_upkeep_runs_out_of_work_within_its_horizon():
    eng = StandInGraphs(model(), 1024)
    prefill(eng, 100)
    need = eng.missing_ahead(ahead=128)
    for _ in need:
        eng.capture_seconds = 0.0
        eng.upkeep(1.0)
    assert eng.missing_ahead(ahead=128) == []
    assert sorted(eng.captured) == sorted({(tb, length_bucket(c + tb, 1024)) for c, tb in need})
    # forwards starting at 100 to 228 resident slots, of 1 to 128 new tokens: keys up to 356 slots
    assert {lb for _, lb in eng.captured} == {128, 256, 384}


def test_a_session_gives_its_engine_the_idle_window_before_its_decoder():
    from ticktock.runtime import load_runtime
    from ticktock.session import DuplexSession

    rt = load_runtime(None)
    budgets: list[float] = []

    class Recording(Engine):
        def upkeep(self, budget: float) -> float:
            budgets.append(budget)
            return 0.25

    session = DuplexSession(rt.model, rt.protocol, "sl", engine=Recording(rt.model, 4096))
    session.prepare(window=1.0)
    assert len(budgets) == 1 and 0.0 < budgets[0] <= 1.0
    assert session.prepared[0] >= 0.25  # the upkeep's seconds count as idle time used


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_a_graph_upkeep_captured_is_the_one_the_forward_replays():
    m = model().to("cuda")
    eng, ref = FastEngine(m, 1024, mode="graph"), Engine(m, 1024)
    for e in (eng, ref):
        e.forward([Segment(torch.arange(120) % 100, [0] * 120)], unit=0)
    assert eng.upkeep(10.0) > 0  # (1, 128): the next 1-token forward's graph
    for _ in range(12):  # past 128 resident slots: the graphs upkeep captured serve these forwards
        eng.upkeep(10.0)
    n = len(eng.graphs)
    ids = torch.tensor([7])
    got, want = eng.forward([Segment(ids, [0])], unit=1), ref.forward([Segment(ids, [0])], unit=1)
    assert len(eng.graphs) == n  # nothing captured inside the forward
    torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)
