"""Draft, verify and the decoders, tested without a model (docs/design.md §6).

A fake "model" (next-token logits from a seeded table indexed by the last three tokens)
drives every decoder through the engine's loop: propose -> one forward over root + draft
-> verify -> observe -> commit. Greedy output must be token-identical to plain greedy
decoding; sampling must be lossless (statistically, and exactly by enumeration).
"""

from __future__ import annotations

import math

import pytest
import torch

from ticktock.decoding import (
    DECODERS,
    Draft,
    LookaheadDecoder,
    PromptLookupDecoder,
    TokenRecyclingDecoder,
    make_decoder,
    verify_draft,
    verify_greedy,
    verify_sampling,
)
from ticktock.decoding.verify import Verdict, cut_verdict, residual

V = 16
PROMPT = [3, 1, 4, 1, 5, 9, 2, 6]
STEPS = 200
# three tokens of context: with two, greedy output falls into a 5-token cycle (too easy)
_TABLE = 3.0 * torch.randn((V + 1) ** 3, V, generator=torch.Generator().manual_seed(1234))


@pytest.fixture(autouse=True)
def _one_thread():
    """Thousands of tiny-tensor calls: OpenMP hand-offs would dominate on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def model(prefix: list[int]) -> torch.Tensor:
    """Next-token logits ``(V,)`` after ``prefix``: a fixed function of its last three tokens."""
    a, b, c = ([V, V, V] + prefix)[-3:]  # V = "no token yet"
    return _TABLE[(a * (V + 1) + b) * (V + 1) + c]


def forward(history: list[int], draft: Draft | None) -> torch.Tensor:
    """What the engine returns: ``(n + 1, V)``, the root row then one row per draft node."""
    paths = draft.paths() if draft is not None else []
    return torch.stack([model(history)] + [model(history + p) for p in paths])


def greedy_oracle(prompt: list[int], steps: int, forced: dict[int, list[int]]) -> list[int]:
    history = list(prompt)
    while len(history) - len(prompt) < steps:
        history += forced.get(len(history) - len(prompt), [])
        history.append(int(model(history).argmax()))
    return history[len(prompt) :]


def generate(decoder, prompt, steps, max_len, forced=None, temperature=0.0, generator=None):
    """The engine's loop. ``forced``: tokens the engine inserts itself at some output lengths."""
    forced = forced or {}
    decoder.reset()
    history, forwards = list(prompt), 0
    while (done := len(history) - len(prompt)) < steps:
        history += forced.get(done, [])
        done = len(history) - len(prompt)
        room = min([steps] + [k for k in forced if k > done]) - done  # stop at the next insertion
        draft = decoder.propose(list(history), max_len)
        assert draft is None or len(draft) <= max_len, f"{decoder.name}: {len(draft)} nodes > {max_len}"
        logits = forward(history, draft)
        verdict = verify_draft(draft, logits, temperature, generator, max_tokens=room)
        assert len(verdict.tokens) == len(verdict.accepted) + 1 <= room
        decoder.observe(list(history), draft, logits, verdict)
        history += verdict.tokens
        forwards += 1
    return history[len(prompt) :], forwards


# ---------------------------------------------------------------------- decoder matrix
# one line per decoder: (name, must it beat one forward per token on the fake model?)
MATRIX = [
    ("ar", False),
    ("pld", True),
    ("tr", True),
    ("lookahead", True),
]


@pytest.mark.parametrize("max_len", [3, 32])
@pytest.mark.parametrize("name,speeds_up", MATRIX)
def test_greedy_equals_plain_greedy(name, speeds_up, max_len):
    forced = {50: [7, 7], 120: [0]}  # the engine commits tokens of its own now and then
    out, forwards = generate(make_decoder(name), PROMPT, STEPS, max_len, forced)
    assert out == greedy_oracle(PROMPT, STEPS, forced)
    if speeds_up:
        assert forwards < 0.9 * STEPS, f"{name}: {forwards} forwards for {STEPS} tokens"
    else:
        assert forwards == STEPS - sum(map(len, forced.values()))


@pytest.mark.parametrize("name,speeds_up", MATRIX)
def test_sampling_loop(name, speeds_up):
    g = torch.Generator().manual_seed(0)
    out, forwards = generate(make_decoder(name), PROMPT, STEPS, 32, temperature=0.7, generator=g)
    assert len(out) == STEPS and all(0 <= t < V for t in out) and forwards <= STEPS
    cold, _ = generate(make_decoder(name), PROMPT, STEPS, 32, temperature=1e-4, generator=g)
    assert cold == greedy_oracle(PROMPT, STEPS, {})  # p is one-hot: sampling is greedy


@pytest.mark.parametrize("name,speeds_up", MATRIX)
def test_session_reset_forgets(name, speeds_up):
    dec = make_decoder(name)
    first = generate(dec, PROMPT, 60, 32)
    assert generate(dec, PROMPT, 60, 32) == first  # generate() resets: same forwards again


def test_registry():
    assert {"ar", "pld", "tr", "lookahead"} <= set(DECODERS)
    assert make_decoder("pld").name == "pld"
    with pytest.raises(ValueError, match="known: .*lookahead"):
        make_decoder("nope")


# ---------------------------------------------------------------------- draft


def test_chain_helpers():
    d = Draft.chain([5, 6, 7], source="main")
    assert len(d) == 3 and d.parents == [-1, 0, 1] and d.source == ["main"] * 3
    assert d.depths().tolist() == [1, 2, 3]
    assert d.paths() == [[5], [5, 6], [5, 6, 7]]
    assert torch.equal(d.tree_mask(), torch.tril(torch.ones(3, 3, dtype=torch.bool)))
    assert d.truncate_depth(2).tokens == [5, 6]


def test_merge_is_a_trie():
    q = torch.full((2, V), 1.0 / V)
    a = Draft.chain([1, 2, 3], source="main")
    b = Draft.chain([1, 2, 4], source="runnerup")
    c = Draft.chain([5, 6], probs=q, source="pool")
    m = Draft.merge(a, None, b, c)
    assert m.tokens == [1, 2, 3, 4, 5, 6]
    assert m.parents == [-1, 0, 1, 1, -1, 4]
    assert m.source == ["main", "main", "main", "runnerup", "pool", "pool"]
    assert m.paths() == [[1], [1, 2], [1, 2, 3], [1, 2, 4], [5], [5, 6]]
    assert m.probs.shape == (6, V)
    assert torch.equal(m.probs[3], torch.nn.functional.one_hot(torch.tensor(4), V).float())
    assert torch.equal(m.probs[4:], q)
    mask = m.tree_mask()
    assert mask[3].nonzero().view(-1).tolist() == [0, 1, 3]  # 1 -> 2 -> 4, not 3
    assert mask[5].nonzero().view(-1).tolist() == [4, 5]
    assert m.depths().tolist() == [1, 2, 3, 3, 1, 2]
    t = m.truncate_depth(2)
    assert t.tokens == [1, 2, 5, 6] and t.parents == [-1, 0, -1, 2] and t.probs.shape == (4, V)
    assert len(Draft.merge()) == 0 and Draft.merge(a, a).tokens == a.tokens


def test_draft_validates():
    with pytest.raises(ValueError, match="topological"):
        Draft([1, 2], [1, -1])
    with pytest.raises(ValueError, match="sibling"):
        Draft([1, 1], [-1, -1])
    with pytest.raises(AssertionError, match="probs"):
        Draft([1], [-1], probs=torch.ones(2, V))


# ---------------------------------------------------------------------- greedy verify


def _greedy(history: list[int], k: int) -> list[int]:
    return greedy_oracle(history, k, {})


def test_all_accept():
    cont = _greedy(PROMPT, 8)
    d = Draft.chain(cont[:7])
    v = verify_greedy(d, forward(PROMPT, d))
    assert v.accepted == list(range(7)) and v.tokens == cont


def test_none_accept():
    first = _greedy(PROMPT, 1)[0]
    wrong = [(first + 1) % V] + _greedy(PROMPT, 6)[1:]  # right tail, wrong head: nothing counts
    d = Draft.chain(wrong)
    v = verify_greedy(d, forward(PROMPT, d))
    assert v.accepted == [] and v.tokens == [first]


def test_plain_step():
    first = _greedy(PROMPT, 1)
    assert verify_greedy(None, forward(PROMPT, None)).tokens == first
    assert verify_greedy(Draft([], []), forward(PROMPT, None)).tokens == first
    g = torch.Generator().manual_seed(0)
    assert len(verify_sampling(None, forward(PROMPT, None), 1.0, g).tokens) == 1
    with pytest.raises(AssertionError, match=r"n \+ 1 = 2"):
        verify_greedy(Draft.chain([1]), forward(PROMPT, None))


def test_tree_picks_the_right_branch():
    cont = _greedy(PROMPT, 5)
    wrong = [(t + 1) % V for t in cont]
    tree = Draft.merge(
        Draft.chain([wrong[0], cont[1]]),  # wrong first token
        Draft.chain(cont[:2] + [wrong[2]]),  # right for two tokens, then wrong
        Draft.chain(cont[:4]),  # right for four tokens
    )
    v = verify_greedy(tree, forward(PROMPT, tree))
    assert v.tokens == cont and [tree.tokens[i] for i in v.accepted] == cont[:4]
    assert tree.paths()[v.accepted[-1]] == cont[:4]


@pytest.mark.parametrize("cap", [1, 2, 5, 8, 20])
def test_max_tokens(cap):
    cont = _greedy(PROMPT, 8)
    d = Draft.chain(cont[:7])
    logits = forward(PROMPT, d)
    assert verify_greedy(d, logits, max_tokens=cap).tokens == cont[:cap]
    g = torch.Generator().manual_seed(0)
    v = verify_sampling(d, logits, 1.0, g, max_tokens=cap)
    assert 1 <= len(v.tokens) <= cap and v.tokens[:-1] == cont[: len(v.tokens) - 1]


def test_cut_verdict_keeps_a_prefix_and_ends_with_the_ruled_token():
    v = Verdict([0, 1, 2], [10, 11, 12, 13])
    assert cut_verdict(v, 4, 13) == v
    assert cut_verdict(v, 2, 11) == Verdict([0], [10, 11])  # stop here: 11 becomes the bonus token, node 1 is dropped
    assert cut_verdict(v, 3, 99) == Verdict([0, 1], [10, 11, 99])  # a forced token in place of the model's 12
    with pytest.raises(AssertionError, match="n must be"):
        cut_verdict(v, 0, 10)


def test_zero_temperature_is_greedy():
    cont = _greedy(PROMPT, 4)
    d = Draft.chain(cont[:3])
    assert verify_sampling(d, forward(PROMPT, d), 0.0, torch.Generator()).tokens == cont


# ---------------------------------------------------------------------- sampling is lossless

P = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)  # the model's distribution at T=1
Q = torch.tensor([0.45, 0.35, 0.2, 0.0], dtype=torch.float64)  # the drafter's (never draws 3)
TRIALS = 25_000  # per (draft kind, temperature): 200k verifications in all, ~10 s on CPU
MIN_P_VALUE = 1e-3  # chi-square goodness-of-fit threshold on the first committed token


def _target(temperature: float) -> torch.Tensor:
    return torch.softmax(P.log() / temperature, -1)


def _drafts(kind: str, g: torch.Generator) -> list[Draft]:
    """TRIALS drafts, each drawn the way its ``probs`` claim (siblings without replacement)."""
    if kind == "det-chain":
        return [Draft.chain([2, 3])] * TRIALS
    if kind == "det-tree":
        return [Draft([1, 2, 3], [-1, -1, 1])] * TRIALS
    gumbel = -torch.log(-torch.log(torch.rand(TRIALS, 4, generator=g, dtype=torch.float64)))
    order = (Q.log() + gumbel).argsort(-1, descending=True).tolist()  # Gumbel-top-k draws
    q2 = torch.stack([Q, Q])
    if kind == "q-chain":
        cache = {x: Draft.chain([x], probs=Q[None]) for x in range(3)}
        return [cache[o[0]] for o in order]
    cache = {(x, y): Draft([x, y], [-1, -1], probs=q2) for x in range(3) for y in range(3) if x != y}
    return [cache[o[0], o[1]] for o in order]  # q-tree: two root children


def _chi2_p_value(counts: torch.Tensor, probs: torch.Tensor) -> float:
    expected = counts.sum() * probs
    stat = ((counts - expected) ** 2 / expected).sum()
    df = torch.tensor((len(probs) - 1) / 2, dtype=torch.float64)
    return float(torch.special.gammaincc(df, stat / 2))


@pytest.mark.parametrize("temperature", [0.3, 1.0])
@pytest.mark.parametrize("kind", ["q-chain", "q-tree", "det-chain", "det-tree"])
def test_first_token_follows_the_model(kind, temperature):
    g = torch.Generator().manual_seed(7)
    p = _target(temperature)
    drafts = _drafts(kind, g)
    counts = torch.zeros(4, dtype=torch.float64)
    accepted = 0
    for d in drafts:
        logits = (P.log() * torch.ones(len(d) + 1, 1)).float()  # every row: the same model p
        v = verify_sampling(d, logits, temperature, g)
        counts[v.tokens[0]] += 1
        accepted += bool(v.accepted)
    assert _chi2_p_value(counts, p) > MIN_P_VALUE, f"{kind} T={temperature}: {counts / TRIALS} vs {p}"
    if kind == "q-chain":  # acceptance rate = sum_x min(p, q) (Leviathan et al. 2023)
        rate = torch.minimum(p, Q).sum().item()
        assert abs(accepted / TRIALS - rate) < 5 * math.sqrt(rate * (1 - rate) / TRIALS)


def _law(p: torch.Tensor, cands: list[tuple[int, torch.Tensor]]) -> torch.Tensor:
    """Exact law of the committed token when children ``(token, q~)`` are tried in order."""
    if not cands:
        return p
    (x, q), rest = cands[0], cands[1:]
    a = min(1.0, (p[x] / q[x]).item())
    return a * torch.nn.functional.one_hot(torch.tensor(x), len(p)).double() + (1 - a) * _law(
        residual(p, q), rest
    )


@pytest.mark.parametrize("temperature", [0.3, 1.0])
def test_first_token_law_is_exact(temperature):
    p = _target(temperature)
    chain = sum(Q[x] * _law(p, [(x, Q)]) for x in range(4) if Q[x] > 0)
    torch.testing.assert_close(chain, p, rtol=0, atol=1e-12)
    tree = torch.zeros(4, dtype=torch.float64)  # two children drawn without replacement
    for x in range(4):
        for y in range(4):
            if x != y and Q[x] > 0 and Q[y] > 0:
                q_y = Q.clone()
                q_y[x] = 0
                q_y /= q_y.sum()
                tree += Q[x] * q_y[y] * _law(p, [(x, Q), (y, q_y)])
    torch.testing.assert_close(tree, p, rtol=0, atol=1e-12)
    onehot = torch.eye(4, dtype=torch.float64)  # deterministic children: one-hot q
    torch.testing.assert_close(_law(p, [(1, onehot[1]), (2, onehot[2])]), p, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------- the baselines


def test_prompt_lookup_uses_the_most_recent_longest_match():
    h = [1, 2, 3, 9, 9, 5, 2, 3, 7, 8, 6, 2, 3]
    d = PromptLookupDecoder(num_pred_tokens=3).propose(h, 10)
    assert d.tokens == [7, 8, 6]  # "2 3" last seen before "7 8 6" (trigram "6 2 3" absent)
    assert PromptLookupDecoder().propose([1, 2, 3], 10) is None
    assert PromptLookupDecoder().propose(h, 2).tokens == [7, 8]


def test_token_recycling_tree():
    dec = TokenRecyclingDecoder()
    assert len(dec.template) == 26 and max(len(r) for r, _ in dec.template) == 6
    assert dec.propose([1], 32) is None  # nothing learned yet
    d = Draft.chain([4, 5])
    logits = torch.randn(3, V, generator=torch.Generator().manual_seed(0))
    dec.observe([1], d, logits, verify_greedy(d, logits))
    tree = dec.propose([9, 1], 32)
    top = logits.topk(8).indices
    assert tree.tokens[:8] == top[0].tolist()  # the root's children: top-8 after token 1
    depth = tree.depths()
    assert len(tree) <= 26 and int(depth.max()) <= 6 and len(dec.propose([9, 1], 5)) == 5


def test_lookahead_window_and_pool():
    dec = LookaheadDecoder()
    h = PROMPT
    d = dec.propose(h, 64)
    assert d.source == ["jacobi"] * 7 and d.parents == [-1, 0, 1, 2, 3, 4, 5]
    logits = forward(h, d)
    v = verify_greedy(d, logits)
    dec.observe(h, d, logits, v)
    assert sum(len(b) for b in dec.pool.values()) == 8  # one n-gram per window position + 1
    nxt = h + v.tokens
    d2 = dec.propose(nxt, 64)
    assert d2.source[:7] == ["jacobi"] * 7 and len(d2) <= 7 + 7 * 4
