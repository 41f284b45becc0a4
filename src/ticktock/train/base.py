"""`ticktock train base`: the recipe that makes `ticktock-tiny` from the synthetic world (docs/design.md §5, §5a).

* tokenizer: byte-level BPE on every text the world can produce;
* data: fresh sessions rendered continuously by worker processes (train voices only);
  a share of them are *listening pre-training* examples — the same audio with a
  "Transcribe what you hear." system prompt and each unit speaking the words that
  ended in its chunk — a dense objective that teaches the encoder to hear words;
* loss: next-token CE on model outputs only; random logical-position offsets;
* output: model dir (fp16 safetensors + tokenizer + config), recipe.json, train_log.jsonl, loss.png.

The knobs are a `BaseRecipe` (`base_recipe`, presets in `presets/base/`). `--init` may also name a published
checkpoint (a Qwen2.5-Omni thinker): it is fine-tuned into a duplex model with its own tokenizer and audio tower,
speaking a protocol file's tokens (`init_checkpoint`, `tower_audio`).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from ..audio.whisper_mel import WhisperMelStream
from ..model import DuplexLM, preset
from ..model.deepen import deepen_audio_encoder, deepen_decoder
from ..model.tokenizer import load_tokenizer, train_tokenizer
from ..protocol import Decision, DuplexProtocol
from ..scenarios.script import Script
from .base_recipe import BaseRecipe
from .data import DATA_PRESETS, TrainingData, check_data, render_training_session
from .examples import (CONTEXT_SAMPLES, TRANSCRIBE_SYSTEM, Example, UnitSpec, build_example, filler_id,
                       heard_from_units, transcription_units)
from .hesitation import maybe_hesitate
from .init_checkpoint import init_from_checkpoint, save_trained
from .tower_audio import stream_mel
from .trainer import TrainConfig, model_loss, train
from .word_frames import WordFrameHead, n_classes

_WORKER: dict = {}


@dataclass
class ExampleFactory:
    """Picklable-by-fork callable: seed -> one training Example from a freshly rendered session."""

    protocol: DuplexProtocol
    transcribe_share: float = 0.3
    max_len: int = 512
    inner_per_chunk: int = 0  # > 0: also frame-level word classes for the encoder objective
    family_weights: dict[str, float] | None = None  # None: every task family equally often
    reply_weights: dict[str, float] | None = None  # over-sampled sessions by what the model must say
    max_offset: int = 3000  # logical-position offsets after the prefix are drawn from [0, max_offset)
    mel: WhisperMelStream | None = None  # a tower's stream log-mel: audio augmented here, floors per unit
    data: TrainingData = DATA_PRESETS["espeak"]  # what is rendered (the recipe's `data`)

    def __call__(self, seed: int) -> Example:
        from ..scenarios.engines import Engines

        rng = random.Random(seed)
        if random.Random(f"read:{seed}").random() < self.data.read_share:  # drawn apart, as `scramble`
            return self.read_example(rng)
        renderer = _WORKER.setdefault("renderer", Engines())
        # drawn apart from `rng`, so data without scrambling draws exactly the sessions it always did
        scramble = random.Random(f"scramble:{seed}").random() < self.data.scrambled_share
        r = render_training_session(self.data, rng, seed, renderer, self.family_weights, self.reply_weights,
                                    scramble)
        audio, words, floors = r.audio, r.words, None
        if scramble or rng.random() < self.transcribe_share:  # a scrambled session is only for listening
            system, units = TRANSCRIBE_SYSTEM, transcription_units(r.words, r.script.n_units)
        else:
            system = r.script.system
            heard = heard_from_units(r.script.units, r.script.utterances)
            units = [UnitSpec(Decision[u.decision.upper()], u.content, u.turn_end, u.tool_result, h)
                     for u, h in zip(r.script.units, heard)]
            if self.data.hesitate_share:  # drawn apart, so data without hesitations draws what it always did
                units, audio, words = maybe_hesitate(units, audio, words, self.data.hesitate_share,
                                                     random.Random(f"hesitate:{seed}"), self.protocol.chunk_samples)
        if self.mel is not None:
            from .tower_audio import unit_floors, worker_audio

            audio = worker_audio(audio, seed)
            floors = unit_floors(self.mel, audio, len(units))
        return build_example(self.protocol, system, units, audio, rng, self.max_len, max_offset=self.max_offset,
                             words=words, inner_per_chunk=self.inner_per_chunk, floors=floors)

    def read_example(self, rng: random.Random, n_requests: int = 8) -> Example:
        """A window of requests read as text (`read_requests`), drawn with the data's phrasings and prompts."""
        from ..scenarios.intents.exchange import fresh_phrasings
        from ..scenarios.prompts import training_prompt
        from ..scenarios.suites import SUITES
        from .read_requests import READ_FAMILIES, build_read_example, mishear, read_requests

        weights = {f: float(f in READ_FAMILIES) for f in SUITES["train"].families}
        requests = []
        with fresh_phrasings(self.data.fresh_phrasings, self.data.composed_share, self.data.by_form):
            while len(requests) < n_requests:
                script = draw_training_script(rng, weights)
                requests += read_requests(script)
        if self.data.read_noise:  # misheard words drawn from the window's own requests
            pool = [w for words, _ in requests for w in words.split()]
            requests = [(mishear(words, self.data.read_noise, rng, pool), reply) for words, reply in requests]
        system = training_prompt(rng) if self.data.prompts else script.system
        ex = build_read_example(self.protocol, system, requests, rng, self.max_len, self.max_offset)
        if self.inner_per_chunk:
            from .word_frames import frame_labels, word_vocab

            ex.frame_words = frame_labels([], 0, ex.n_units, self.inner_per_chunk, word_vocab())
        if self.mel is not None:
            from .tower_audio import unit_floors

            ex.mel_floor = unit_floors(self.mel, ex.audio[CONTEXT_SAMPLES:].astype("float32"), ex.n_units + 1)
        return ex


def train_session_index(rng: random.Random, family_weights: dict[str, float] | None = None) -> int:
    """A random index into the endless training suite, whose family is drawn with `family_weights`
    (families not named weigh 1). The suite assigns families round-robin by index."""
    from ..scenarios.suites import SUITES

    families = SUITES["train"].families
    weights = [(family_weights or {}).get(f, 1.0) for f in families]
    return rng.randrange(1 << 26) * len(families) + rng.choices(range(len(families)), weights)[0]


def draw_training_script(rng: random.Random, family_weights: dict[str, float] | None = None,
                         reply_weights: dict[str, float] | None = None, max_tries: int = 100_000) -> Script:
    """A training session drawn with `family_weights` (see `train_session_index`); with `reply_weights`
    {word: W}, a session whose expected outputs contain the word is drawn W times as often (the largest W
    of the words it contains; others weigh 1). Rejection sampling: the suite's sessions stay what they are,
    only how often each is drawn changes, and with no reply weights the draws are exactly the unweighted ones."""
    from ..scenarios.suites import script_at

    top = max([1.0, *(reply_weights or {}).values()])
    for _ in range(max_tries):
        script = script_at("train", train_session_index(rng, family_weights), seed=0)
        if not reply_weights:
            return script
        said = set(re.findall(r"[a-z]+", " ".join(u.content for u in script.units).lower()))
        hits = [w for word, w in reply_weights.items() if word in said]
        if rng.random() * top < (max(hits) if hits else 1.0):
            return script
    raise ValueError(f"reply_weights {reply_weights} accepted no session in {max_tries} draws")


def parse_reply_weights(text: str | None) -> dict[str, float] | None:
    """'minus=6,plus=2' -> {'minus': 6.0, 'plus': 2.0}; None or '' -> None. Words are lower-case letters."""
    if not text:
        return None
    out: dict[str, float] = {}
    for item in text.split(","):
        word, _, value = (part.strip() for part in item.partition("="))
        try:
            w = float(value)
        except ValueError:
            w = -1.0
        if not re.fullmatch(r"[a-z]+", word) or w < 0:
            raise ValueError(f"bad reply weight {item!r}: expected WORD=W (a lower-case word, W >= 0)")
        out[word] = w
    return out


def parse_family_weights(text: str | None) -> dict[str, float] | None:
    """'short_qa=2,tool_call=2' -> {'short_qa': 2.0, 'tool_call': 2.0}; None or '' -> None (uniform)."""
    from ..scenarios.suites import SUITES

    if not text:
        return None
    families = SUITES["train"].families
    out: dict[str, float] = {}
    for item in text.split(","):
        name, _, value = (part.strip() for part in item.partition("="))
        if name not in families:
            raise ValueError(f"unknown task family {name!r} in family_weights; known: {', '.join(families)}")
        try:
            out[name] = float(value)
        except ValueError:
            out[name] = -1.0
        if out[name] < 0:
            raise ValueError(f"bad family weight {item!r}: expected {name}=W with W >= 0")
    if not any(out.get(f, 1.0) > 0 for f in families):
        raise ValueError("family_weights leaves no family to draw")
    return out


def build_tokenizer(vocab_size: int = 4096):
    from ..scenarios import corpus_texts

    texts = corpus_texts() + [TRANSCRIBE_SYSTEM]
    return train_tokenizer(texts, vocab_size=vocab_size)


def plot_losses(log: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in log if "loss" in r]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
    ax[0].plot([r["step"] for r in rows], [r["loss"] for r in rows])
    ax[0].set(xlabel="step", ylabel="train loss (outputs)", yscale="log", title="loss")
    ax[1].plot([r["step"] for r in rows], [r["acc"] for r in rows], label="output tokens")
    if any("word_frame_acc" in r for r in rows):
        ax[1].plot([r["step"] for r in rows], [r.get("word_frame_acc", float("nan")) for r in rows],
                   label="encoder word frames")
        ax[1].legend()
    ax[1].set(xlabel="step", ylabel="accuracy", title="accuracy")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def initial_model(preset_name: str, seed: int, init: Path | None = None, init_decoder: Path | None = None,
                  protocol: str | None = None, audio_layers: int | None = None, decoder_layers: int | None = None):
    """(model, tokenizer, protocol, protocol file content | None): continued from `init` (a ticktock model or
    a published checkpoint, `init_checkpoint`; `audio_layers` deepens its audio encoder, `decoder_layers` its
    decoder, with identity layers), or the preset with the decoder (and tokenizer) of `init_decoder` and a fresh
    audio encoder, or the preset from scratch with a new tokenizer (both with a fresh encoder of `audio_layers`
    layers where it is set; `decoder_layers` only deepens an `init`)."""
    from ..model.io import load_model

    if init is not None:
        model, *rest = init_from_checkpoint(init, protocol)
        if audio_layers is not None:
            torch.manual_seed(seed)  # the new layers' attention and MLP inputs
            if added := deepen_audio_encoder(model, audio_layers):
                print(f"audio encoder deepened by {added} identity layer(s) to {audio_layers}", flush=True)
        if decoder_layers is not None:
            torch.manual_seed(seed + 1)
            if added := deepen_decoder(model, decoder_layers):
                print(f"decoder deepened by {added} identity layer(s) to {decoder_layers}", flush=True)
        return model, *rest
    mcfg = preset(preset_name)
    if audio_layers is not None:
        mcfg.audio.layers = audio_layers
    if init_decoder is not None:
        donor, tok = load_model(init_decoder, "cpu", torch.float32)
        mcfg.decoder = donor.cfg.decoder
        torch.manual_seed(seed)
        model = DuplexLM(mcfg)
        model.lm.load_state_dict(donor.lm.state_dict())
        return model, tok, DuplexProtocol(tok), None
    tok = build_tokenizer(mcfg.decoder.vocab_size)
    mcfg.decoder.vocab_size = tok.get_vocab_size()
    torch.manual_seed(seed)
    return DuplexLM(mcfg), tok, DuplexProtocol(tok), None


def train_base(out: Path, recipe: BaseRecipe, init: Path | None = None, device: str = "cuda",
               protocol: str | None = None, time_budget_s: float = 1e9, workers: int = 0, eval_fn=None) -> list[dict]:
    """Train (or continue, from `init`) the base model by `recipe` (`base_recipe`); `protocol` maps ticktock's
    protocol onto an `init` checkpoint's tokens (`init_checkpoint`). A published model's audio tower trains
    without the encoder's word objective (ticktock's encoder only), whatever the recipe's `word_weight`."""
    recipe.check_start(init, protocol)
    data = recipe.training_data()
    print(check_data(data), flush=True)
    cfg = recipe.train_config(time_budget_s, workers)
    init_decoder = Path(recipe.init_decoder) if recipe.init_decoder else None
    model, tok, proto, spec = initial_model(recipe.model, cfg.seed, init, init_decoder, protocol, recipe.audio_layers,
                                            recipe.decoder_layers)
    print(json.dumps({"params": model.n_params(), "vocab": proto.vocab_size, "layout": model.layout,
                      "protocol": proto.name}), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "recipe.json").write_text(json.dumps(recipe.to_dict(), indent=2))  # `--config` of this file re-runs it
    word_weight = recipe.word_weight
    chunk = mel = None  # ticktock's encoder: its own chunk; a tower: the protocol's unit
    if model.cfg.tower is not None:
        chunk = proto.chunk_samples
        mel = stream_mel(model, chunk)
        if word_weight > 0:
            print(f"word_weight {word_weight} ignored: the word-frame objective trains ticktock's own audio "
                  f"encoder; the {model.layout} audio tower trains through the LM's loss alone (weight 0)", flush=True)
            word_weight = 0.0
    inner = model.audio.inner_per_chunk if word_weight > 0 else 0
    factory = ExampleFactory(proto, transcribe_share=recipe.transcribe_share, max_len=cfg.max_len,
                             inner_per_chunk=inner, family_weights=recipe.family_weights,
                             reply_weights=recipe.reply_weights, max_offset=recipe.max_offset, mel=mel, data=data)
    head = WordFrameHead(model.cfg.audio.width, n_classes()) if inner else None
    loss_fn = param_groups = None
    if head is not None:
        def param_groups(m: DuplexLM, c: TrainConfig) -> list[dict]:
            head.to(m.device)
            params = [*m.named_parameters(), *head.named_parameters()]
            return [{"params": [p for _, p in params if p.dim() >= 2], "weight_decay": c.weight_decay},
                    {"params": [p for _, p in params if p.dim() < 2], "weight_decay": 0.0}]

        def loss_fn(m: DuplexLM, b: dict) -> tuple[torch.Tensor, dict]:
            return model_loss(m, b, train=True, word_head=head, word_weight=word_weight)
    log = train(model, factory, filler_id(proto), cfg, out, device,
                on_checkpoint=lambda m: save_trained(m, tok, spec, out / "model"), eval_fn=eval_fn,
                loss_fn=loss_fn, param_groups=param_groups, chunk=chunk)
    plot_losses(log, out / "loss.png")
    return log


__all__ = ["ExampleFactory", "train_session_index", "draw_training_script", "parse_family_weights", "parse_reply_weights", "build_tokenizer", "train_base", "plot_losses", "load_tokenizer"]
