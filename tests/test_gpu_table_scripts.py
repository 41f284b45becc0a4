"""The scripts behind the GPU table's figures: bf16 agreement (where sessions part from `ar`), the projection check."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from bf16_agreement import agreement, bf16_noise  # noqa: E402
from projection_check import compare  # noqa: E402


def unit(tokens: list[int], margins: list[float] | None = None, **kw) -> dict:
    return {"tokens": tokens, "margins": margins or [9.0] * len(tokens), **kw}


def test_a_session_is_judged_where_it_first_parts():
    ar = {("a", 0): unit([1, 2]), ("a", 1): unit([3, 4], [9.0, 0.1]), ("a", 2): unit([5], [20.0]),
          ("b", 0): unit([6, 7], [5.0, 9.0]), ("c", 0): unit([8])}
    sl = {("a", 0): unit([1, 2]), ("a", 1): unit([3, 9]), ("a", 2): unit([6]),  # parts at a near-tie, then follows
          ("b", 0): unit([7, 7]), ("c", 0): unit([8])}                        # parts where ar was sure
    got = agreement({"ar": ar, "sl": sl}, noise=0.3)["sl"]
    assert got == {"units": 5, "identical": 0.4, "differing": 3, "sessions_parting": 2, "parting_at_near_tie": 1,
                   "differing_after_parting": 1, "max_margin_where_parting": 5.0}


def test_bf16_noise_is_the_largest_margin_shift_on_identical_units():
    fp32 = {("a", 0): unit([1, 2], [3.0, 4.0]), ("a", 1): unit([5], [1.0])}
    bf16 = {("a", 0): unit([1, 2], [3.25, 3.5]), ("a", 1): unit([6], [9.0])}  # the second unit differs: not counted
    assert bf16_noise(bf16, fp32) == (0.5, 2)


def test_projection_check_compares_the_same_units_only():
    def rec(ms: float, tokens: list[int], decision: str = "speak", encoder: float = 1.0) -> dict:
        return {"post_audio_ms": ms, "tokens": tokens, "decision": decision, "encoder_ms": encoder}
    wall = {("sl", "s", 0): rec(10.0, [1]), ("sl", "s", 1): rec(20.0, [2], "tool"), ("sl", "s", 2): rec(99.0, [3])}
    cost = {("sl", "s", 0): rec(8.0, [1]), ("sl", "s", 1): rec(30.0, [2], "tool"), ("sl", "s", 2): rec(1.0, [4])}
    got = compare(wall, cost)["sl"]
    assert got["speak"]["units"] == 1 and got["speak"]["ratio"] == 0.8
    assert got["speak"]["forwards_ratio"] == round(7 / 9, 4)  # the audio front left out on both clocks
    assert got["tool"]["ratio"] == 1.5 and got["all"]["units"] == 2  # unit 2 committed other tokens: left out
