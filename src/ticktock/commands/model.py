"""`ticktock model`: tools over model folders.

    ticktock model expand --shape minicpm-o-4.5-lm --out runs/ticktock-8b --device cuda --dtype bfloat16

`expand` writes a function-preserving expansion of a trained model (default: the shipped ticktock-tiny)
in a larger decoder shape (`model.expand`): the trained model's tokens at the large model's forward cost.
The folder (config.json, model.safetensors, tokenizer.json) loads like the shipped one: `ticktock bench --model OUT`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..model.config import PRESETS, preset
from .engine_options import pick_device

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def add_parser(sub) -> None:
    p = sub.add_parser("model", help="model tools: expand a trained model into a larger decoder shape")
    tools = p.add_subparsers(dest="model_command", required=True)
    e = tools.add_parser("expand", help="a function-preserving expansion into a preset decoder shape",
                         description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("--shape", required=True, choices=list(PRESETS), help="the target decoder shape (a preset)")
    e.add_argument("--out", required=True, help="model folder to write")
    e.add_argument("--model", default=None, help="source model folder (default: the shipped ticktock-tiny)")
    e.add_argument("--device", choices=["cpu", "cuda"], default=None,
                   help="where to build it (default: cuda if available)")
    e.add_argument("--dtype", choices=list(DTYPES), default=None,
                   help="weights as built and saved (default: bfloat16 on cuda, float32 on cpu)")
    e.set_defaults(func=run_expand)


def run_expand(args: argparse.Namespace) -> int:
    from ..model.expand import expand_model, expanded_config
    from ..model.io import load_model, save_model

    console, err = Console(), Console(stderr=True)
    device = pick_device(args.device)
    dtype = DTYPES[args.dtype or ("bfloat16" if device == "cuda" else "float32")]
    src, tok = load_model(args.model, "cpu", torch.float32)  # small: the source stays on the host
    if tok is None:
        err.print(f"[red]{args.model} has no tokenizer.json[/]")
        return 2
    try:
        cfg = expanded_config(src.cfg.decoder, preset(args.shape).decoder)
    except ValueError as e:
        err.print(f"[red]{e}[/]")
        return 2
    name = Path(args.model).name if args.model else "ticktock-tiny"
    err.print(f"expanding {name} into {args.shape} on {device} ({args.dtype or str(dtype).split('.')[-1]}) …")
    with Progress(TextColumn("expanding layers"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("layers", total=cfg.num_hidden_layers)
        big = expand_model(src, preset(args.shape).decoder, device=device, dtype=dtype,
                           progress=lambda: bar.advance(task))
    err.print(f"writing {args.out} …")
    save_model(big, tok, args.out, dtype=dtype)
    n_big = big.n_params()
    del big  # one expanded copy on the device at a time
    side = expand_side_channel(args.model, args.shape, args.out, device, dtype)
    if side is not None:
        err.print(f"its side channel, expanded the same way: {side}")

    s = src.cfg.decoder
    table = Table(title=f"{name} -> {args.shape}")
    for col in ("", "source", "expanded"):
        table.add_column(col, justify="right")
    rows = [("parameters", f"{src.n_params() / 1e6:.1f} M", f"{n_big / 1e6:.1f} M")]
    for field in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                  "intermediate_size", "vocab_size", "tokenizer_vocab", "rope_theta", "rms_norm_eps"):
        rows.append((field, str(getattr(s, field)), str(getattr(cfg, field))))
    for row in rows:
        table.add_row(*row)
    console.print(table)
    if preset(args.shape).decoder.rope_theta != cfg.rope_theta:
        console.print(f"rope_theta kept at the source's {cfg.rope_theta:g} (exactness needs it; the cost is the same)")
    console.print(f"wrote {args.out}  (load it with `ticktock bench --model {args.out}`)")
    return 0


def expand_side_channel(model: str | None, shape: str, out: str, device: str, dtype: torch.dtype) -> Path | None:
    """The source's whole-decoder side channel (`<model>-side-channel/`), expanded like its base and written
    beside the expansion (`<out>-side-channel/`), so `--side-channel` and a2t memory run on it: its decoder alone,
    or, where it keeps the encoder it was fitted on (`save_side_channel_with_encoder`), the whole model. None if
    the source has none (or only a LoRA adapter, which would need expanding as a LoRA)."""
    from safetensors.torch import save_file

    from ..model.adapter import (ADAPTER_SUFFIX, DECODER_FILE, adapter_for, is_decoder_only, is_whole,
                                 load_whole_side_channel)
    from ..model.expand import expand_model
    from ..model.io import DEFAULT_MODEL, load_model

    adapter = adapter_for(model or DEFAULT_MODEL)
    if adapter is None or not is_whole(adapter):
        return None
    src, _ = load_model(model, "cpu", torch.float32)
    load_whole_side_channel(src, adapter)
    big = expand_model(src, preset(shape).decoder, device=device, dtype=dtype)
    dest = Path(out).parent / f"{Path(out).name}{ADAPTER_SUFFIX}"
    dest.mkdir(parents=True, exist_ok=True)
    own_encoder = not is_decoder_only(adapter)  # fitted on another encoder than the base's: keep it
    state = {k: v.detach().to(dtype).contiguous().cpu() for k, v in big.state_dict().items()
             if own_encoder or k.startswith("lm.")}
    if big.cfg.decoder.tie_word_embeddings:
        state.pop("lm.lm_head.weight", None)  # tied: the embedding carries it
    save_file(state, str(dest / ("model.safetensors" if own_encoder else DECODER_FILE)))
    (dest / "config.json").write_text(json.dumps({"ticktock": big.cfg.to_dict()}, indent=2))
    return dest
