"""Benchmark metrics from per-unit replay records (docs/design.md §7).

Every metric of a decoder is computed against `ar` on the same units: a unit is a
speak / tool / listen unit by AR's decision (identical for every decoder under
greedy decoding, since they are all lossless). ℓ is the post-audio latency.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1", 1, 1), ("2-4", 2, 4), ("5-16", 5, 16), ("17-64", 17, 64), ("65-128", 65, 10**9))


def bucket_of(n_tokens: int) -> str:
    for name, lo, hi in BUCKETS:
        if lo <= n_tokens <= hi:
            return name
    return BUCKETS[0][0]  # 0 tokens cannot happen (every unit has a decision); count it with 1


def _mean(xs) -> float | None:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def _quantile(xs: list[float], q: float) -> float | None:
    return float(np.quantile(xs, q)) if xs else None


def _rnd(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


def _ratio(num: float | None, den: float | None) -> float | None:
    return None if num is None or not den else num / den


def by_decoder(records: list[dict]) -> dict[str, dict[tuple[str, int], dict]]:
    out: dict[str, dict[tuple[str, int], dict]] = defaultdict(dict)
    for r in records:
        out[r["decoder"]][(r["session"], r["unit"])] = r
    return out


def onset_keys(ref: dict[tuple[str, int], dict]) -> set[tuple[str, int]]:
    """First speak unit of each model turn: a speak unit whose previous unit was not speak (by AR)."""
    keys = set()
    for (s, u), r in ref.items():
        if r["decision"] == "speak":
            prev = ref.get((s, u - 1))
            if prev is None or prev["decision"] != "speak":
                keys.add((s, u))
    return keys


def decoder_metrics(units: dict[tuple[str, int], dict], ref: dict[tuple[str, int], dict],
                    greedy: bool = True, chunk_ms: float = 1000.0) -> dict:
    keys = [k for k in ref if k in units]
    speak = [k for k in keys if ref[k]["decision"] == "speak"]
    tool = [k for k in keys if ref[k]["decision"] == "tool"]
    onset = onset_keys(ref) & set(keys)

    def lat(ks, table):
        return _mean(table[k]["latency_ms"] for k in ks)

    talk = speak + tool
    sum_fw = sum(units[k]["forwards"] for k in talk)
    mat = _ratio(sum(units[k]["n_tokens"] for k in talk), sum_fw)

    sessions: dict[str, float] = defaultdict(float)
    for (s, _), r in units.items():
        sessions[s] = max(sessions[s], r["lag_ms"])
    max_lags = list(sessions.values())

    fbl: dict[str, list[int]] = {b[0]: [] for b in BUCKETS}
    for r in units.values():
        fbl[bucket_of(r["n_tokens"])].append(r["forwards"])

    fams: dict[str, list] = defaultdict(list)
    for k in speak:
        fams[ref[k]["family"]].append(k)

    n_exp = [r for r in units.values() if r.get("expected") is not None]
    return {
        "sessions": len(sessions),
        "units": len(units),
        "speak_units": len(speak),
        "tool_units": len(tool),
        "lossless": _rnd(_mean(units[k]["tokens"] == ref[k]["tokens"] for k in keys)) if greedy else None,
        "speak_speedup": _rnd(_ratio(lat(speak, ref), lat(speak, units))),
        "tool_speedup": _rnd(_ratio(lat(tool, ref), lat(tool, units))),
        "mat": _rnd(mat),
        "speak_latency_ms": _rnd(lat(speak, units), 3),
        "tool_latency_ms": _rnd(lat(tool, units), 3),
        "onset_ms": _rnd(lat(onset, units), 3),
        "deadline_miss_rate": _rnd(_mean(r["miss"] for r in units.values())),
        "tool_deadline_miss_rate": _rnd(_mean(units[k]["latency_ms"] > chunk_ms or units[k]["miss"] for k in tool)),
        "lagging_sessions": _rnd(_mean(m > chunk_ms for m in max_lags)),
        "max_lag_ms_mean": _rnd(_mean(max_lags), 3),
        "max_lag_ms_max": _rnd(max(max_lags) if max_lags else None, 3),
        "forwards_by_length": {b: _rnd(_mean(v), 3) for b, v in fbl.items()},
        "speak_speedup_by_family": {f: _rnd(_ratio(lat(ks, ref), lat(ks, units))) for f, ks in sorted(fams.items())},
        "idle_used_ms_mean": _rnd(_mean(r["idle_used_ms"] for r in units.values()), 3),
        "pool_tokens": sum(r["pool_tokens"] for r in units.values()),
        "runnerup_units": sum(bool(r["runnerup_used"]) for r in units.values()),
        "peak_resident_slots": max((r["resident_slots"] for r in units.values()), default=0),
        "host_s": _rnd(sum(r.get("host_ms", 0.0) for r in units.values()) / 1000, 2),
        "decision_acc": _rnd(_mean(r["decision"] == r["expected"] for r in n_exp)),
        "latency_ms_p50": _rnd(_quantile([r["latency_ms"] for r in units.values()], 0.5), 3),
        "latency_ms_p99": _rnd(_quantile([r["latency_ms"] for r in units.values()], 0.99), 3),
        "device_mb_per_session": max((r["device_mb"] for r in units.values() if r.get("device_mb") is not None),
                                     default=None),
    }


def summarize(records: list[dict], greedy: bool = True, chunk_ms: float = 1000.0) -> dict[str, dict]:
    """Per decoder (in first-seen order) metrics against `ar`, which must be among the records."""
    tables = by_decoder(records)
    if "ar" not in tables:
        raise ValueError("the records have no 'ar' units; every metric is relative to AR")
    ref = tables["ar"]
    order = list(dict.fromkeys(r["decoder"] for r in records))
    return {d: decoder_metrics(tables[d], ref, greedy, chunk_ms) for d in order}


JSON_KEYS = ("speak_speedup", "tool_speedup", "mat", "lossless", "deadline_miss_rate", "tool_deadline_miss_rate",
             "lagging_sessions", "max_lag_ms_mean", "onset_ms", "tool_latency_ms", "forwards_by_length")


def json_view(summary: dict[str, dict]) -> dict[str, dict]:
    """The keys `ticktock bench --json` promises, per decoder."""
    return {d: {k: m.get(k) for k in JSON_KEYS} for d, m in summary.items()}
