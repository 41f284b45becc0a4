"""Speculative sampling is lossless at the session level.

On a tiny vocabulary (every logit outside four tokens masked to -inf) and a short
unit cap, the joint law of two units' outputs can be enumerated exactly from the
no-cache model. Sessions decoded by `sl` and `pld` with speculative sampling must
draw from that law: a chi-square goodness-of-fit test over the enumerated output
pairs (bins with expected count < 5 pooled), fixed seeds, p-value threshold below.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import torch

from ticktock.protocol import DuplexProtocol
from ticktock.session import CostModelClock, DuplexSession
from ticktock.audio import AudioFrontEnd

from conftest import noise_chunks, random_model

TRIALS = 800  # sessions per (decoder, temperature): ~10 s each on one core
MIN_P_VALUE = 1e-3
SYSTEM = "okay"
# Forwards cost 30 ms and the idle window is ~1 s: `sl` drafts whole units under silence.
PROFILE = {"new_tokens": [1, 256], "context": [0, 100000], "ms": [[30, 30], [30, 30]], "encoder_ms": 1}


@pytest.fixture(scope="module")
def small(protocol) -> DuplexProtocol:
    return DuplexProtocol(protocol.tokenizer, max_unit_tokens=3)


def allowed_ids(p: DuplexProtocol) -> list[int]:
    return [p.id("listen"), p.id("speak"), p.id("chunk_eos"), p.encode("okay")[0]]


def restrict(model, allowed: list[int], scale: float = 0.1):
    """The model's logits, flattened by `scale` (a random model is too sure of itself to test sampling),
    with every token outside `allowed` at -inf: a four-token vocabulary."""
    mask = torch.full((model.cfg.decoder.vocab_size,), float("-inf"))
    mask[allowed] = 0.0
    logits = model.lm.logits
    model.lm.logits = lambda h: logits(h) * scale + mask
    return model


@torch.no_grad()
def exact_law(model, p: DuplexProtocol, chunks: list[np.ndarray], temperature: float) -> dict[tuple, float]:
    """P(unit-0 output, unit-1 output) by enumeration, one full no-cache forward per prefix."""
    front = AudioFrontEnd(model, len(chunks[0]))
    audio = [front.push(c) for c in chunks]
    prefix = [torch.tensor(p.prefix_ids(SYSTEM))]

    def next_probs(seq: list[torch.Tensor]) -> torch.Tensor:
        x = model.embed_segments(seq)
        h = model.lm(x, torch.arange(x.shape[1])[None])
        return torch.softmax(model.lm.logits(h[0, -1]).double() / temperature, -1)

    def units(seq: list[torch.Tensor], k: int) -> list[tuple[tuple, float, list[torch.Tensor]]]:
        """Every output of unit k after `seq`, with its probability and the extended sequence."""
        out, todo = [], [((), 1.0, seq + [torch.tensor([p.id("unit")]), audio[k]])]
        while todo:
            toks, prob, s = todo.pop()
            probs = next_probs(s)
            for t in probs.nonzero().flatten().tolist():
                nt, ns = toks + (t,), s + [torch.tensor([t])]
                if p.is_unit_end(t, len(nt)):
                    out.append((nt, prob * float(probs[t]), ns))
                else:
                    todo.append((nt, prob * float(probs[t]), ns))
        return out

    law = {}
    for u0, p0, s0 in units(prefix, 0):
        for u1, p1, _ in units(s0, 1):
            law[(u0, u1)] = p0 * p1
    return law


def chi2_p_value(counts: Counter, law: dict[tuple, float], n: int) -> float:
    assert set(counts) <= set(law), f"sampled outputs the model cannot produce: {set(counts) - set(law)}"
    obs, exp, rest_o, rest_e = [], [], 0.0, 0.0
    for key, prob in law.items():
        if prob * n >= 5:
            obs.append(counts.get(key, 0))
            exp.append(prob * n)
        else:
            rest_o, rest_e = rest_o + counts.get(key, 0), rest_e + prob * n
    if rest_e > 0:
        obs.append(rest_o)
        exp.append(rest_e)
    o, e = torch.tensor(obs, dtype=torch.float64), torch.tensor(exp, dtype=torch.float64)
    stat = ((o - e) ** 2 / e).sum()
    return float(torch.special.gammaincc(torch.tensor((len(obs) - 1) / 2, dtype=torch.float64), stat / 2))


@pytest.mark.slow
@pytest.mark.parametrize("temperature", [0.3, 1.0])
@pytest.mark.parametrize("decoder", ["sl", "pld"])
@torch.no_grad()
def test_two_units_follow_the_model(small, decoder, temperature):
    model = restrict(random_model(11, small.vocab_size, audio_scale=0.3, std=0.3), allowed_ids(small))
    chunks = noise_chunks(2, 11, speech_units=(0,))
    law = exact_law(model, small, chunks, temperature)
    assert math.isclose(sum(law.values()), 1.0, abs_tol=1e-9)
    assert max(law.values()) < 0.9, "the test model is too peaked to test sampling"
    sess = DuplexSession(model, small, decoder, clock=CostModelClock(PROFILE), temperature=temperature,
                         seed=1234, system=SYSTEM)
    counts: Counter = Counter()
    used = 0  # committed tokens that came from an accepted draft
    for _ in range(TRIALS):
        sess.reset()
        r0, r1 = sess.step(chunks[0]), sess.step(chunks[1])
        counts[(tuple(r0.tokens), tuple(r1.tokens))] += 1
        used += sum(r0.accepted_len) + sum(r1.accepted_len)
    assert used > 0, f"{decoder} never had a draft token accepted: the test would not exercise verification"
    pv = chi2_p_value(counts, law, TRIALS)
    assert pv > MIN_P_VALUE, f"{decoder} T={temperature}: p={pv:.2g}"
