"""The fast path equals the eager engine (the oracle) through a session's worth of cache verbs.

The same script of forwards and cache operations (append, mixed audio embeddings, draft
trees, commit_path, snapshot/restore, truncate, evict, a forward beyond the largest bucket,
a nearly full cache) runs on an eager `Engine` and a `FastEngine`; logits and resident K/V
must match after every step. On a CPU the static-shape path runs without graphs (fast, always);
on CUDA with graphs (marked `gpu`, skipped without CUDA). The fused 1-token attention kernels run where
Triton is installed: compiled on CUDA, under Triton's interpreter on a CPU.
"""

from __future__ import annotations

import pytest
import torch

from ticktock.decoding.draft import Draft
from ticktock.engine import Engine, Segment, decode_attention
from ticktock.engine.fast import BUCKETS, FastEngine, length_bucket, make_kernels, query_bucket
from ticktock.model import DuplexLM, preset

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
GPU = [pytest.mark.gpu, CUDA]
TRITON = pytest.mark.skipif(decode_attention.triton is None, reason="needs Triton")
# on a CPU, the fused kernels run under Triton's interpreter (conftest), which is chosen once per process
INTERPRETED = [TRITON, pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA runs the compiled kernels")]
SETUPS = [  # (device, dtype, mode, attention)
    pytest.param(("cpu", torch.float32, "static", "sdpa"), id="cpu-static-sdpa"),
    pytest.param(("cpu", torch.float32, "static", "matmul"), id="cpu-static-matmul"),
    # Qwen3-style attention: QK-norm, head_dim set apart from the width, 4 query heads per KV head
    pytest.param(("cpu", torch.float32, "static", "sdpa", "qk-norm"), id="cpu-static-sdpa-qknorm"),
    pytest.param(("cpu", torch.float32, "static", "matmul", "qk-norm"), id="cpu-static-matmul-qknorm"),
    pytest.param(("cpu", torch.float32, "static", "fused"), id="cpu-static-fused", marks=INTERPRETED),
    pytest.param(("cpu", torch.float32, "static", "fused", "qk-norm"), id="cpu-static-fused-qknorm", marks=INTERPRETED),
    pytest.param(("cuda", torch.float32, "graph", "sdpa"), id="cuda-graph-fp32-sdpa", marks=GPU),
    pytest.param(("cuda", torch.float32, "graph", "matmul"), id="cuda-graph-fp32-matmul", marks=GPU),
    pytest.param(("cuda", torch.bfloat16, "graph", "auto"), id="cuda-graph-bf16-auto", marks=GPU),
    pytest.param(("cuda", torch.float32, "graph", "sdpa", "qk-norm"), id="cuda-graph-fp32-sdpa-qknorm", marks=GPU),
    pytest.param(("cuda", torch.bfloat16, "graph", "auto", "qk-norm"), id="cuda-graph-bf16-auto-qknorm", marks=GPU),
    pytest.param(("cuda", torch.float32, "graph", "fused"), id="cuda-graph-fp32-fused", marks=GPU + [TRITON]),
    pytest.param(("cuda", torch.float32, "graph", "fused", "qk-norm"), id="cuda-graph-fp32-fused-qknorm",
                 marks=GPU + [TRITON]),
    pytest.param(("cuda", torch.bfloat16, "graph", "fused", "qk-norm"), id="cuda-graph-bf16-fused-qknorm",
                 marks=GPU + [TRITON]),
]
TOL = {torch.float32: 2e-5, torch.bfloat16: 5e-2}  # max |fast - eager| / max |eager|
S = 320  # cache slots: small, so the full-cache fallback is reachable


def make_model(device: str, dtype: torch.dtype, seed: int = 0, variant: str | None = None) -> DuplexLM:
    torch.manual_seed(seed)
    cfg = preset("test")
    if variant == "qk-norm":
        cfg.decoder.qk_norm, cfg.decoder.explicit_head_dim, cfg.decoder.num_key_value_heads = True, 32, 1
    m = DuplexLM(cfg).eval()
    with torch.no_grad():
        for name, p in m.lm.named_parameters():
            if p.dim() > 1:
                p.normal_(0, 0.3)
            elif name.endswith(("q_norm.weight", "k_norm.weight")):
                p.uniform_(0.5, 1.5)
    return m.to(device=device, dtype=dtype)


class Pair:
    """An eager and a fast engine over the same model, driven in lock step."""

    def __init__(self, device, dtype, mode, attention="auto", variant=None):
        self.model = make_model(device, dtype, variant=variant)
        self.eager = Engine(self.model, S)
        self.fast = FastEngine(self.model, S, mode=mode, attention=attention)
        self.tol = TOL[dtype]
        self.gen = torch.Generator().manual_seed(1)

    def ids(self, n: int) -> torch.Tensor:
        return torch.randint(0, self.model.cfg.decoder.vocab_size, (n,), generator=self.gen)

    def forward(self, *args, **kw) -> torch.Tensor:
        a = self.eager.forward(*args, **kw)
        b = self.fast.forward(*args, **kw)
        assert a.shape == b.shape
        err = ((a - b).abs().max() / a.abs().max()).item()
        assert err <= self.tol, f"logits differ: relative max error {err:.2e}"
        self.check_cache()
        return a

    def both(self, verb: str, *args) -> None:
        getattr(self.eager.cache, verb)(*args)
        getattr(self.fast.cache, verb)(*args)
        self.check_cache()

    def check_cache(self) -> None:
        ce, cf = self.eager.cache, self.fast.cache
        assert (ce.length, ce.next_pos) == (cf.length, cf.next_pos)
        n = ce.length
        assert torch.equal(ce.pos[:n], cf.pos[:n]) and torch.equal(ce.kind[:n], cf.kind[:n])
        for a, b in ((ce.k, cf.k), (ce.v, cf.v)):
            a, b = a[:, :, :, :n].float(), b[:, :, :, :n].float()
            assert ((a - b).abs().max() / a.abs().max().clamp_min(1e-6)).item() <= self.tol


def seg(ids: torch.Tensor, kind: int = 4) -> Segment:
    return Segment(ids, [kind] * len(ids))


@pytest.fixture(params=SETUPS)
def pair(request):
    if request.param[0] == "cuda":
        # one process compiles the same kernels for every setup; each setup starts from none, as a session's process
        # does (else the setups' dtypes and shapes together pass dynamo's recompile limit, which fullgraph makes fatal)
        torch._dynamo.reset()
        make_kernels.cache_clear()
    return Pair(*request.param)


def test_fast_equals_eager_through_cache_verbs(pair):
    p = pair
    p.forward([seg(p.ids(13), 0)], unit=-1)  # prefix
    for n in (1, 3, 8, 17):
        p.forward([seg(p.ids(n))], unit=0)
    audio = torch.randn(10, p.model.cfg.decoder.hidden_size, generator=p.gen).to(p.model.dtype)
    p.forward([seg(p.ids(1), 1), Segment(audio, [2] * 10), seg(p.ids(2))], unit=1)  # ids + audio embeddings

    # a draft tree, then keep one branch (not a prefix: data moves)
    start = p.eager.cache.length + 1
    parents = [-1, 0, 0, 1, 2, -1, 5]
    p.forward([seg(p.ids(1))], unit=1, draft=Draft(p.ids(7).tolist(), parents))
    p.both("commit_path", start, [start + 5, start + 6])
    p.forward([seg(p.ids(1))], unit=1)

    # snapshot / draft / restore, then truncate
    snap = p.eager.cache.snapshot()
    p.forward([seg(p.ids(2))], unit=2, draft=Draft(p.ids(3).tolist(), [-1, 0, -1]))
    p.both("restore", snap)
    p.forward([seg(p.ids(5))], unit=2)
    p.both("truncate", p.eager.cache.length - 3)
    p.forward([seg(p.ids(4))], unit=2)

    # evict (compaction: survivors keep their positions, next_pos keeps advancing)
    p.both("evict", list(range(14, 30)))
    p.forward([seg(p.ids(2))], unit=3)
    assert p.fast.fast_forwards == 12

    # beyond the largest bucket: eager fallback inside the fast engine
    p.forward([seg(p.ids(max(BUCKETS) + 5))], unit=3)
    assert p.fast.fast_forwards == 12

    # a nearly full cache: the padded bucket would not fit, so eager again; then 1 token still fits
    free = S - p.eager.cache.length
    p.forward([seg(p.ids(free - 3))], unit=4)
    p.forward([seg(p.ids(3))], unit=4)  # bucket 4 > 3 free slots -> eager
    assert p.fast.fast_forwards == 12
    p.both("truncate", p.eager.cache.length - 3)
    p.forward([seg(p.ids(1))], unit=4)  # bucket 1 fits
    assert p.fast.fast_forwards == 13
    if p.fast.uses_graphs:
        assert set(p.fast.chosen.values()) <= {"sdpa", "matmul", "fused"} and len(p.fast.chosen) == len(p.fast.graphs)


def test_greedy_generation_identical(pair):
    p = pair
    if p.model.dtype != torch.float32:
        pytest.skip("token identity is checked in fp32; bf16 is checked by tolerance")
    p.forward([seg(p.ids(40), 0)], unit=-1)
    tok_e = tok_f = int(p.ids(1))
    out_e, out_f = [], []
    for step in range(24):
        le = p.eager.forward([seg(torch.tensor([tok_e]))], unit=0)
        lf = p.fast.forward([seg(torch.tensor([tok_f]))], unit=0)
        tok_e, tok_f = int(le[0].argmax()), int(lf[0].argmax())
        out_e.append(tok_e)
        out_f.append(tok_f)
        if step % 8 == 7:  # roll back a few tokens, as a rejected draft would
            for eng in (p.eager, p.fast):
                eng.cache.truncate(eng.cache.length - 2)
    assert out_e == out_f
    assert p.fast.fast_forwards == 25


def test_modes_and_buckets():
    m = make_model("cpu", torch.float32)
    assert not FastEngine(m, 64).uses_static  # auto on a CPU: eager
    assert FastEngine(m, 64, mode="static").uses_static
    with pytest.raises(ValueError):
        FastEngine(m, 64, mode="graph")  # needs CUDA
    assert [query_bucket(n) for n in (1, 2, 3, 5, 100, 128, 129)] == [1, 2, 4, 8, 128, 128, None]
    assert length_bucket(2049, 1 << 20) == 2304 and length_bucket(2048, 1 << 20) == 2048
    assert length_bucket(50, 1 << 20) == 128 and length_bucket(300, 200) == 200
    for n in range(1, 20000, 97):
        lb = length_bucket(n, 1 << 20)
        assert n <= lb < n * 1.15 + 128


@pytest.mark.gpu
@CUDA
def test_warmup_captures_without_touching_the_cache():
    p = Pair("cuda", torch.float32, "graph")
    p.forward([seg(p.ids(50), 0)], unit=-1)
    k, v, n = p.fast.cache.k.clone(), p.fast.cache.v.clone(), p.fast.cache.length
    before = len(p.fast.graphs)  # the prefill captured one
    assert p.fast.warmup([n, 200], buckets=(1, 4, 32)) == 6
    assert torch.equal(k, p.fast.cache.k) and torch.equal(v, p.fast.cache.v) and p.fast.cache.length == n
    p.forward([seg(p.ids(3))], unit=0)
    assert len(p.fast.graphs) == before + 6  # the forward reused a warmed graph


@pytest.mark.gpu
@CUDA
def test_a_pool_hands_its_first_engines_kernel_choices_on():
    """The second graph engine of a pool captures only the kernels the first chose, and computes what eager does."""
    from ticktock.engine import EnginePool

    model = make_model("cuda", torch.bfloat16)
    pool = EnginePool(model, "fast", S, warm_slots=128)
    first, second = pool.acquire(), pool.acquire()
    assert first.chosen and second.chosen == {k: first.chosen[k] for k in second.chosen}
    assert not second.timings  # nothing timed: every kernel came from the first engine
    eager = Engine(model, S)
    ids = torch.randint(0, model.cfg.decoder.vocab_size, (40,), generator=torch.Generator().manual_seed(3))
    a, b = eager.forward([seg(ids)], unit=0), second.forward([seg(ids)], unit=0)
    assert ((a - b).abs().max() / a.abs().max()).item() <= TOL[torch.bfloat16]


@pytest.mark.gpu
@CUDA
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_masked_attention_agrees_with_the_math_kernel_at_every_length(dtype):
    """On CUDA `masked_attention` pins the memory-efficient kernel (cuDNN would plan anew at each key length);
    it must agree with the reference math kernel for lengths that grow a slot at a time, under a ragged mask."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from ticktock.model.transformer import masked_attention

    gen = torch.Generator().manual_seed(0)
    for s in range(200, 206):
        q = torch.randn(1, 8, 3, 64, generator=gen).to("cuda", dtype)
        k, v = (torch.randn(1, 8, s, 64, generator=gen).to("cuda", dtype) for _ in range(2))
        mask = torch.ones(3, s, dtype=torch.bool)
        mask[:, -3:] = torch.ones(3, 3, dtype=torch.bool).tril()  # causal among the new rows
        mask[0, 17] = False  # a slot a tree node does not see
        mask = mask.to("cuda")
        with sdpa_kernel([SDPBackend.MATH]):
            want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask)
        got = masked_attention(q, k, v, mask).float()
        assert (got - want).abs().max().item() <= (1e-5 if dtype == torch.float32 else 2e-2)


@pytest.mark.gpu
@CUDA
def test_session_graphs_replay_what_they_run_eagerly():
    """A captured SessionGraphs forward, replayed with new inputs, equals the same forwards run eagerly (fp32)."""
    from ticktock.engine import ForwardRequest, SessionGraphs

    torch.manual_seed(0)
    model = DuplexLM(preset("test")).eval().to("cuda")
    vocab = model.cfg.decoder.vocab_size
    gen = torch.Generator().manual_seed(1)
    prefixes = [torch.randint(vocab, (n,), generator=gen) for n in (9, 30, 17)]
    twins = []
    for _ in range(2):
        engines = [Engine(model, max_slots=512) for _ in prefixes]
        for e, p in zip(engines, prefixes):
            e.forward([seg(p, 0)], unit=-1)
        twins.append(engines)
    graphs = [SessionGraphs(model, [e.cache for e in twins[0]], capture=True),
              SessionGraphs(model, [e.cache for e in twins[1]], capture=False)]
    warmed = graphs[0].warm(128)
    assert warmed == len(graphs[0].graphs) > 0
    for step in range(4):  # every shape was captured by `warm`: forwards replay
        asked = {0: 1, 2: 3} if step % 2 else {0: 2, 1: 1, 2: 1}
        reqs = {i: ForwardRequest([seg(torch.randint(vocab, (n,), generator=gen))], unit=step) for i, n in asked.items()}
        got, want = (g.forward(reqs) for g in graphs)
        for i in reqs:
            torch.testing.assert_close(got[i], want[i], atol=1e-4, rtol=1e-4)
    assert len(graphs[0].graphs) == warmed and graphs[0].forwards == 4
    for a, b in zip(*twins):
        n = a.cache.length
        torch.testing.assert_close(a.cache.k[:, :, :, :n], b.cache.k[:, :, :, :n], atol=1e-4, rtol=1e-4)
