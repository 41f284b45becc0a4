"""The encoder's frame-level word targets and the 20 Hz encoder they train."""

import numpy as np
import torch

from ticktock.model.audio_encoder import AudioEncoder
from ticktock.model.config import AudioEncoderConfig
from ticktock.train.features import freq_warp
from ticktock.train.word_frames import (BACKGROUND, FIRST_WORD, IGNORE, SILENCE, WordFrameHead, frame_labels, n_classes,
                                        word_class)

VOCAB = {"book": FIRST_WORD, "a": FIRST_WORD + 1, "flight": FIRST_WORD + 2}


def test_frames_take_the_word_that_spans_their_centre():
    words = [{"word": "book", "start": 1.10, "end": 1.40, "speaker": "user"},
             {"word": "flight", "start": 1.50, "end": 2.05, "speaker": "user"},
             {"word": "noise", "start": 2.30, "end": 2.50, "speaker": "other"}]
    lab = frame_labels(words, u0=1, n_units=2, inner_per_chunk=20, vocab=VOCAB)  # 50 ms frames from 1.0 s
    assert lab.shape == (40,)
    centre = 1.0 + (np.arange(40) + 0.5) * 0.05
    for i, c in enumerate(centre):
        want = (VOCAB["book"] if 1.10 <= c < 1.40 else VOCAB["flight"] if 1.50 <= c < 2.05
                else BACKGROUND if 2.30 <= c < 2.50 else SILENCE)
        assert lab[i] == want, (i, c)


def test_unseen_words_hash_stably_outside_the_vocabulary():
    a, b = word_class("zanzibar", VOCAB), word_class("zanzibar", VOCAB)
    assert a == b and a >= FIRST_WORD + len(VOCAB)
    assert word_class("flight", VOCAB) == VOCAB["flight"]


def test_head_ignores_padding():
    head = WordFrameHead(8, 10)
    x = torch.randn(6, 8)
    y = torch.tensor([SILENCE, FIRST_WORD, IGNORE, IGNORE, FIRST_WORD + 1, BACKGROUND])
    loss, stats = head.loss(x, y)
    ref = torch.nn.functional.cross_entropy(head.proj(x[[0, 1, 4, 5]]), y[[0, 1, 4, 5]])
    assert torch.allclose(loss, ref)
    assert 0 <= float(stats["word_frame_acc"]) <= 1


def test_inner_stride_encoder_keeps_ten_embeddings_per_chunk():
    cfg = AudioEncoderConfig(width=32, layers=1, heads=2, inner_stride=5)
    enc = AudioEncoder(cfg, out_dim=48).eval()
    mel, ctx = torch.randn(3, 100, 80), torch.randn(3, 100, 80)
    out, inner = enc(mel, ctx, return_inner=True)
    assert out.shape == (3, 10, 48) and inner.shape == (3, 20, 32)
    assert torch.equal(enc(mel, ctx), out)
    # the current chunk's outputs depend on its own frames and the bounded left context only
    assert torch.allclose(enc(mel[:1], ctx[:1]), out[:1], atol=1e-5)


def test_freq_warp_keeps_time_and_range():
    mel = torch.rand(4, 30, 80)
    warped = freq_warp(mel, torch.Generator().manual_seed(0))
    assert warped.shape == mel.shape
    assert warped.min() >= mel.min() - 1e-6 and warped.max() <= mel.max() + 1e-6
    assert torch.equal(freq_warp(mel, max_warp=0.0), mel)


@torch.enable_grad()  # other tests run commands in-process that switch gradients off
def test_examples_carry_frame_labels_into_the_training_loss(protocol):
    """build_example → collate → model_loss: the word-frame CE reaches the encoder, and a few steps lower it."""
    import random

    from ticktock.model import DuplexLM, preset
    from ticktock.protocol import Decision
    from ticktock.train.examples import UnitSpec, build_example
    from ticktock.train.trainer import collate, model_loss

    cfg = preset("test")
    cfg.decoder.vocab_size = protocol.vocab_size
    cfg.audio.inner_stride = 5
    torch.manual_seed(0)
    model = DuplexLM(cfg)
    units = [UnitSpec(Decision.LISTEN), UnitSpec(Decision.SPEAK, "book a flight", turn_end=True), UnitSpec(Decision.LISTEN)]
    words = [{"word": "book", "start": 0.2, "end": 0.5, "speaker": "user"},
             {"word": "flight", "start": 0.6, "end": 0.9, "speaker": "user"}]
    audio = np.random.default_rng(0).standard_normal(3 * 16000).astype(np.float32) * 0.1
    ex = [build_example(protocol, "sys", units, audio, random.Random(s), max_len=200, words=words, inner_per_chunk=20)
          for s in range(4)]
    assert all(e.frame_words is not None and len(e.frame_words) == 20 * e.n_units for e in ex)
    batch = collate(ex, protocol.id("pad"), 16000, "cpu")
    assert batch["frame_words"].shape[1] == 20 * max(e.n_units for e in ex)
    head = WordFrameHead(cfg.audio.width, n_classes())
    opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=3e-3)
    losses = []
    for _ in range(15):
        loss, stats = model_loss(model, batch, train=False, word_head=head, word_weight=1.0)
        opt.zero_grad()
        loss.backward()
        assert model.audio.conv[0].weight.grad.abs().sum() > 0
        opt.step()
        losses.append(float(stats["word_loss"]))
    assert losses[-1] < losses[0]
