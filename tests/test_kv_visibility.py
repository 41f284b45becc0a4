"""`train.kv_visibility`: a whole-session forward under the visibility mask equals the runtime's evicting cache."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ticktock.cache.kv import KVCache
from ticktock.cache.policies.acoustic_to_text import ACOUSTIC_KINDS, AcousticToText
from ticktock.protocol import DuplexProtocol
from ticktock.session import DuplexSession
from ticktock.audio import AudioFrontEnd
from ticktock.train.side_channel.kv_visibility import eviction_times, unit_schedule, visibility

from conftest import noise_chunks, random_model

WORDS = ["", "yes", "one two", "", "no thanks", "", "hello there", "ok", "", "three"]


def session_layout(p: DuplexProtocol, model, results, chunks, system: str) -> dict[str, np.ndarray | torch.Tensor]:
    """The session as the runtime wrote it, whole: ids, audio embeddings per unit, write times, ledger units,
    acoustic flags. The last unit's `<|asr_end|>` is still pending (unwritten) and left out."""
    e = p.audio_per_chunk
    prefix = p.prefix_ids(system)
    ids, write, ledger, acoustic = list(prefix), [-2] * len(prefix), [-1] * len(prefix), [False] * len(prefix)
    for r in results:
        out = r.tokens + r.slack_tokens
        w, led = unit_schedule(r.index, 1 + e, len(r.tokens), len(r.slack_tokens), trailing_check=True)
        ids += [p.id("unit")] + [p.id("pad")] * e + out
        write += w
        ledger += led
        acoustic += [True] * (1 + e) + [p.output_kind(t) in ACOUSTIC_KINDS for t in out]
    if results[-1].slack_tokens:
        ids, write, ledger, acoustic = ids[:-1], write[:-1], ledger[:-1], acoustic[:-1]
    front = AudioFrontEnd(model, len(chunks[0]))
    audio = torch.cat([front.push(c) for c in chunks])  # (U*E, D), as the session embedded them
    return {"ids": np.array(ids), "write": np.array(write), "ledger": np.array(ledger),
            "acoustic": np.array(acoustic), "audio": audio}


def masked_kv(model, p: DuplexProtocol, lay: dict, mask: np.ndarray | None) -> KVCache:
    """One forward over the whole layout with `mask` (None: causal); its keys and values, every token's."""
    ids = torch.from_numpy(lay["ids"])
    x = model.lm.embed(ids[None])
    x[0, ids == p.id("pad")] = lay["audio"].to(x.dtype)
    t = len(ids)
    cfg = model.cfg.decoder
    cache = KVCache(cfg.num_hidden_layers, cfg.num_key_value_heads, cfg.head_dim, t)
    pos = torch.arange(t)
    cache.reserve(pos, 0, [0] * t)
    model.lm(x, pos[None], cache, torch.from_numpy(mask) if mask is not None else None)
    return cache


@pytest.mark.parametrize("retention", [1, 3])
def test_visibility_mask_equals_the_evicting_runtime(protocol, retention):
    """Every slot `a2t` left in the runtime's cache holds exactly the keys and values a whole-session forward
    computes under `visibility` — at every layer — while a causal recompute of the same tokens does not."""
    p = DuplexProtocol(protocol.tokenizer, max_unit_tokens=24, max_asr_tokens=8)
    model, chunks = random_model(3, p.vocab_size), noise_chunks(len(WORDS), 3, speech_units=(1, 2, 4, 6))
    sess = DuplexSession(model, p, "ar", policy=AcousticToText(budget=1, retention_units=retention),
                         side_channel="after_content", oracle_transcripts=WORDS)
    with torch.no_grad():
        results = sess.run(chunks)
        sess.flush()
        lay = session_layout(p, model, results, chunks, sess.system)
        cache = sess.engine.cache
        n = cache.length
        kept = cache.pos[:n].numpy()  # logical position = index in the whole layout (nothing was drafted)
        assert n < len(lay["ids"]) and kept.max() == len(lay["ids"]) - 1, "eviction must have happened"
        gone = eviction_times(lay["ledger"], lay["acoustic"], retention)
        # what the mask says survives is what the runtime kept
        assert set(kept.tolist()) == set(np.flatnonzero(gone > lay["write"].max()).tolist())
        mask = visibility(lay["write"], gone)
        want = masked_kv(model, p, lay, mask)
        torch.testing.assert_close(cache.k[..., :n, :], want.k[..., kept, :], atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(cache.v[..., :n, :], want.v[..., kept, :], atol=1e-4, rtol=1e-4)
        causal = masked_kv(model, p, lay, None)
        assert not torch.allclose(cache.k[1:, ..., :n, :], causal.k[1:, ..., kept, :], atol=1e-3), \
            "a causal forward should differ after layer 0 (it sees the evicted audio)"


def test_batched_masks_equal_one_sequence_at_a_time(protocol):
    """The decoder takes one (T, T) mask per sequence: (B, T, T) gives what each mask gives alone."""
    model = random_model(4, protocol.vocab_size)
    rng = np.random.default_rng(0)
    t = 12
    ids = torch.from_numpy(rng.integers(0, protocol.vocab_size, (2, t)))
    masks = torch.from_numpy(np.tri(t, dtype=bool) & (rng.random((2, t, t)) < 0.7)) | torch.eye(t, dtype=torch.bool)
    pos = torch.arange(t)[None].repeat(2, 1)
    with torch.no_grad():
        both = model.lm(model.lm.embed(ids), pos, new_mask=masks)
        for b in range(2):
            alone = model.lm(model.lm.embed(ids[b:b + 1]), pos[b:b + 1], new_mask=masks[b])
            torch.testing.assert_close(both[b], alone[0], atol=1e-5, rtol=1e-5)


def test_unit_schedule_orders_the_writes_of_a_unit():
    """Marker in the previous slack, audio and outputs in `step`, the last output and the trailing segment in the
    unit's slack; a trailing `<|asr_end|>`, or a last output with no segment check, carries the next unit."""
    w, led = unit_schedule(4, n_head=3, n_inline=3, n_trailing=3, trailing_check=True)
    assert w == [7, 8, 8, 8, 8, 9, 9, 9, 9] and led == [4] * 8 + [5]
    w, led = unit_schedule(4, n_head=3, n_inline=2, n_trailing=0, trailing_check=False)
    assert w == [7, 8, 8, 8, 9] and led == [4, 4, 4, 4, 5]
    gone = eviction_times(np.array([-1, 2, 2]), np.array([True, True, False]), retention=5)
    assert gone[0] > 10**9 and gone[1] == 15 and gone[2] > 10**9
