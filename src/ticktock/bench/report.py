"""Write a benchmark's results folder: config.json, units.jsonl, summary.json, report.md and PNG plots."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from .metrics import BUCKETS

ABLATION = ("ar", "sl-silence", "sl-runnerup", "sl", "sl-tree")


def _fmt(x, nd: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    lines += ["| " + " | ".join(_fmt(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(lines)


SUMMARY_COLS = [("speak ×", "speak_speedup"), ("tool ×", "tool_speedup"), ("#MAT", "mat"),
                ("lossless", "lossless"), ("speak ℓ ms", "speak_latency_ms"), ("onset ms", "onset_ms"),
                ("tool ℓ ms", "tool_latency_ms"), ("miss", "deadline_miss_rate"),
                ("tool miss", "tool_deadline_miss_rate"), ("lagging", "lagging_sessions"),
                ("max lag mean ms", "max_lag_ms_mean"), ("max lag max ms", "max_lag_ms_max"),
                ("replay s", "host_s")]


def markdown(summary: dict[str, dict], config: dict, plots: list[str]) -> str:
    decs = list(summary)
    parts = [f"# ticktock bench · {config.get('suite')} · {config.get('clock')} clock",
             "",
             f"model: `{config.get('model')}` · profile: `{config.get('profile')}` · "
             f"temperature: {config.get('temperature')} · sessions: {next(iter(summary.values()), {}).get('sessions')} "
             f"· hardware: {config.get('hardware', config.get('device'))} · date: {config.get('date')}",
             "", "Speedups are AR's mean post-audio latency ℓ over the decoder's, on AR's speak / tool units.",
             "", "## Per decoder", "",
             _table(["decoder"] + [c for c, _ in SUMMARY_COLS], [[d] + [summary[d].get(k) for _, k in SUMMARY_COLS]
                                                               for d in decs])]
    fams = sorted({f for m in summary.values() for f in m.get("speak_speedup_by_family", {})})
    if fams:
        parts += ["", "## Speak speedup by family", "",
                  _table(["decoder"] + fams, [[d] + [summary[d]["speak_speedup_by_family"].get(f) for f in fams]
                                              for d in decs])]
    buckets = [b[0] for b in BUCKETS]
    parts += ["", "## Post-audio forwards per unit, by output length (tokens)", "",
              _table(["decoder"] + buckets, [[d] + [summary[d]["forwards_by_length"].get(b) for b in buckets]
                                             for d in decs])]
    abl = [d for d in ABLATION if d in summary]
    if len(abl) > 2 or (len(abl) == 2 and "ar" not in abl):
        parts += ["", "## Ablation (Speculative Listening components)", "",
                  _table(["decoder", "speak ×", "tool ×", "#MAT", "pool tokens", "runner-up units", "idle used ms"],
                         [[d, summary[d]["speak_speedup"], summary[d]["tool_speedup"], summary[d]["mat"],
                           summary[d]["pool_tokens"], summary[d]["runnerup_units"], summary[d]["idle_used_ms_mean"]]
                          for d in abl])]
    if plots:
        parts += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
    return "\n".join(parts) + "\n"


COLOURS = {"listen": "#bbbbbb", "speak": "#1f77b4", "tool": "#d62728", None: "#000000"}


def plot_timeline(records: list[dict], path: Path, decoders=("ar", "sl"), chunk_ms: float = 1000.0) -> str | None:
    """Per-unit post-audio latency of one session (the one with the most speak/tool units), AR vs SL."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    decoders = [d for d in decoders if any(r["decoder"] == d for r in records)]
    if not decoders:
        return None
    talk: dict[str, int] = {}
    for r in records:
        if r["decoder"] == "ar":
            talk[r["session"]] = talk.get(r["session"], 0) + (r["decision"] in ("speak", "tool"))
    if not talk:
        return None
    sid = max(talk, key=lambda s: talk[s])
    fig, axes = plt.subplots(len(decoders), 1, figsize=(10, 2.2 * len(decoders) + 0.6), sharex=True, sharey=True,
                             squeeze=False)
    top = max((r["latency_ms"] for r in records if r["session"] == sid and r["decoder"] in decoders), default=0.0)
    on_scale = top > 0.25 * chunk_ms  # with a fast profile the deadline line would flatten every bar
    for ax, d in zip(axes[:, 0], decoders):
        us = sorted((r for r in records if r["decoder"] == d and r["session"] == sid), key=lambda r: r["unit"])
        ax.bar([r["unit"] for r in us], [r["latency_ms"] for r in us],
               color=[COLOURS.get(r["decision"], "#000000") for r in us])
        if on_scale:
            ax.axhline(chunk_ms, color="k", ls="--", lw=1)
        ax.set_ylabel(f"{d}\nℓ (ms)")
    note = "dashed" if on_scale else "off scale"
    axes[0, 0].set_title(f"session {sid}: post-audio latency per unit ({note}: {chunk_ms:.0f} ms deadline)")
    axes[-1, 0].set_xlabel("unit")
    axes[0, 0].legend(handles=[Patch(color=c, label=k) for k, c in COLOURS.items() if k], loc="upper right",
                      fontsize=8)
    return _save(fig, path)


def _save(fig, path: Path) -> str:
    """Lay out, write and close a figure; its file name (what the report links)."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def plot_forwards(summary: dict[str, dict], path: Path) -> str:
    """Mean post-audio forwards per unit by output length, one bar group per bucket."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    buckets = [b[0] for b in BUCKETS]
    decs = list(summary)
    width = 0.8 / max(1, len(decs))
    fig, ax = plt.subplots(figsize=(9, 4))
    for i, d in enumerate(decs):
        ys = [summary[d]["forwards_by_length"].get(b) or 0 for b in buckets]
        ax.bar([j + i * width for j in range(len(buckets))], ys, width, label=d)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(buckets))], buckets)
    ax.set_xlabel("output tokens per unit")
    ax.set_ylabel("post-audio forwards per unit")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_sweep(sweep: dict[str, dict[str, dict]], axis: str, path: Path) -> str:
    """Speak and tool speedup over AR against one swept setting (temperature: Fig. 4b; sessions: Fig. 4c)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = sorted(sweep, key=float)
    decs = [d for d in next(iter(sweep.values())) if d != "ar"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharex=True)
    for ax, key, title in zip(axes, ("speak_speedup", "tool_speedup"), ("speak chunks", "tool chunks")):
        for d in decs:
            ax.plot([float(x) for x in xs], [sweep[x][d].get(key) or float("nan") for x in xs], "o-", label=d)
        ax.axhline(1.0, color="#888888", lw=0.8, ls=":")
        ax.set_title(title)
        ax.set_xlabel("temperature" if axis == "temperature" else "concurrent sessions N")
        ax.set_ylabel("speedup over ar")
    axes[0].legend(fontsize=8)
    return _save(fig, path)


def plot_capacity(sweep: dict[str, dict[str, dict]], path: Path, chunk_ms: float = 1000.0) -> str:
    """ℓ p50 and p99 against the number of concurrent sessions N, one line pair per decoder."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = sorted(sweep, key=float)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for k, d in enumerate(next(iter(sweep.values()))):
        color = f"C{k}"
        for key, style in (("latency_ms_p50", "o-"), ("latency_ms_p99", "s--")):
            ys = [sweep[x][d].get(key) or float("nan") for x in xs]
            ax.plot([float(x) for x in xs], ys, style, color=color, label=f"{d} {key[-3:]}")
    ax.axhline(chunk_ms, color="#888888", lw=0.8, ls=":", label="deadline (one chunk)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("concurrent sessions N")
    ax.set_ylabel("post-audio latency ℓ (ms)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def capacity(sweep: dict[str, dict[str, dict]], decoder: str) -> int | None:
    """The largest N of a sessions sweep up to which (every swept N at most it) `decoder` missed no deadline
    and no session lagged; None if it did at the smallest N."""
    best = None
    for x in sorted(sweep, key=float):
        m = sweep[x][decoder]
        if m.get("deadline_miss_rate") != 0 or m.get("lagging_sessions") != 0:
            break
        best = int(x)
    return best


def capacity_markdown(sweep: dict[str, dict[str, dict]]) -> str:
    """Per N and decoder: ℓ p50 / p99, misses, lagging sessions, GPU memory per session; the capacity per decoder."""
    xs = sorted(sweep, key=float)
    decs = list(next(iter(sweep.values())))
    def rate(v):  # a few misses in a thousand units must not print as 0.00
        return "–" if v is None else f"{v:.4f}"

    rows = [[x, d, m.get("latency_ms_p50"), m.get("latency_ms_p99"), rate(m.get("deadline_miss_rate")),
             rate(m.get("lagging_sessions")), m.get("max_lag_ms_max"), rate(m.get("lossless")),
             m.get("device_mb_per_session")]
            for x in xs for d in decs for m in [sweep[x][d]]]
    def cap(d):  # None: it failed at the smallest N swept
        n = capacity(sweep, d)
        return f"{d} N = {n}" if n is not None else f"{d} none (it failed at N = {xs[0]})"
    caps = ", ".join(cap(d) for d in decs)
    return "\n".join(["", "## Latency vs sessions", "",
                      _table(["N", "decoder", "ℓ p50 ms", "ℓ p99 ms", "miss rate", "lagging", "max lag ms",
                              "lossless", "GPU MiB / session"], rows),
                      "", f"Largest N with no deadline missed and no session lagging: {caps}."])


def sweep_markdown(sweeps: dict[str, dict[str, dict]]) -> str:
    """Tables of speak / tool speedup per swept value (the keys of `sweeps`: 'temperature', 'sessions')."""
    parts = []
    for axis, sweep in sweeps.items():
        xs = sorted(sweep, key=float)
        decs = [d for d in next(iter(sweep.values())) if d != "ar"]
        parts += ["", f"## Speedup vs {axis}", "",
                  _table([axis] + [f"{d} speak ×" for d in decs] + [f"{d} tool ×" for d in decs],
                         [[x] + [sweep[x][d].get("speak_speedup") for d in decs]
                          + [sweep[x][d].get("tool_speedup") for d in decs] for x in xs])]
        if axis == "sessions":
            parts.append(capacity_markdown(sweep))
    return "\n".join(parts) + "\n"


def draw_plots(out: Path, config: dict, records: list[dict], summary: dict[str, dict],
               sweeps: dict[str, dict[str, dict]] | None = None) -> list[str]:
    """A run's plots into `out` (the timeline, forwards by length, and per swept axis its speedups and, for
    sessions, ℓ p50 / p99); returns the names of those drawn."""
    chunk_ms = float(config.get("chunk_ms", 1000.0))
    names = []
    t = plot_timeline(records, out / "timeline.png", chunk_ms=chunk_ms)
    names += [t] if t else []
    names.append(plot_forwards(summary, out / "forwards_by_length.png"))
    for axis, sweep in (sweeps or {}).items():
        if len(sweep) < 2:
            continue
        names.append(plot_sweep(sweep, axis, out / f"speedup_vs_{axis}.png"))
        if axis == "sessions":
            names.append(plot_capacity(sweep, out / "latency_vs_sessions.png", chunk_ms))
    return names


def read_units(folder: Path) -> list[dict]:
    """A results folder's unit records, from units.jsonl or, as fetched runs keep it, units.jsonl.gz."""
    plain, packed = folder / "units.jsonl", folder / "units.jsonl.gz"
    if not plain.exists() and not packed.exists():
        raise FileNotFoundError(f"{folder}: no units.jsonl(.gz)")
    with open(plain) if plain.exists() else gzip.open(packed, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_units(path: Path, records: list[dict]) -> None:
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def write_results(out: str | Path, config: dict, records: list[dict], summary: dict[str, dict],
                  plots: bool = True, sweeps: dict[str, dict[str, dict]] | None = None,
                  sweep_units: dict[str, list[dict]] | None = None) -> Path:
    """`records` are the main run's units (units.jsonl); `sweep_units` the other sweep points' by name
    (`sessions-8` -> units-sessions-8.jsonl), so every point's per-session numbers can be recomputed."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config, indent=1, default=str) + "\n")
    write_units(out / "units.jsonl", records)
    for name, recs in (sweep_units or {}).items():
        write_units(out / f"units-{name}.jsonl", recs)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    names: list[str] = []
    if plots:
        try:
            names = draw_plots(out, config, records, summary, sweeps)
        except ImportError:  # matplotlib is optional for the numbers
            pass
    if sweeps:
        (out / "sweeps.json").write_text(json.dumps(sweeps, indent=1) + "\n")
    (out / "report.md").write_text(markdown(summary, config, names) + (sweep_markdown(sweeps) if sweeps else ""))
    return out
