"""Takeover rates against a base: the per-tag counts, the discordant units and the bootstrap interval."""

from __future__ import annotations

import pytest

from ticktock.bench.quality import (SessionOutcome, behaviour_vs_base, discordant, paired_takeovers, score,
                                         takeover_delta_ci)
from ticktock.session.result import UnitResult


def session(decisions: list[str], tags: list[list[str]]) -> SessionOutcome:
    """A scored session: unit k decided `decisions[k]`; the script tags it `tags[k]` (every scripted decision:
    listen, since only takeovers are counted here)."""
    units = [UnitResult(index=k, decision=d, tokens=[]) for k, d in enumerate(decisions)]
    expected = [{"decision": "listen", "tags": t} for t in tags]
    return SessionOutcome("pause_handling", units, expected)


PAUSES = [["pause"], [], ["pause"], ["backchannel"]]


def test_takeovers_count_per_tag_what_the_floor_does_not_ask_for():
    s = session(["speak", "speak", "listen", "listen"], PAUSES)  # a pause spoken into; a backchannel listened to
    got = score([s])
    assert got["counts"]["pause"] == 2 and got["pause_takeover"] == 0.5
    assert got["counts"]["backchannel"] == 1 and got["backchannel_takeover"] == 1.0


def test_discordant_units_and_the_delta_agree():
    base = [session(["speak", "listen", "listen", "speak"], PAUSES),
            session(["speak", "listen", "speak", "speak"], PAUSES)]
    other = [session(["listen", "listen", "listen", "speak"], PAUSES),
             session(["speak", "listen", "listen", "speak"], PAUSES)]
    assert discordant(paired_takeovers(base, other, "pause")) == [2, 0]
    assert discordant(paired_takeovers(other, base, "pause")) == [0, 2]
    out = behaviour_vs_base(base, other)
    assert out["pause_takeover_delta_points"] == -50.0  # 3 of 4 pauses -> 1 of 4
    assert out["takeover_discordant"] == {"pause": [2, 0], "backchannel": [0, 0]}
    lo, hi = out["pause_takeover_delta_ci95"]
    assert lo <= -50.0 <= hi and hi <= 0  # every resample loses takeovers or keeps them
    assert out["backchannel_takeover_delta_ci95"] == [0.0, 0.0]


def test_the_interval_narrows_with_more_sessions_and_is_none_without_the_tag():
    def pair(n: int):
        base = [session(["speak" if i % 4 == 0 else "listen", "listen", "listen", "speak"], PAUSES) for i in range(n)]
        other = [session(["listen", "listen", "listen", "speak"], PAUSES) for _ in range(n)]
        return base, other

    small = takeover_delta_ci(paired_takeovers(*pair(8), "pause"))
    large = takeover_delta_ci(paired_takeovers(*pair(200), "pause"))
    assert large[0] >= small[0] and large[1] - large[0] < small[1] - small[0]
    assert large[0] < -12.5 < large[1]  # the rate of 1 in 8 pauses, within the interval
    plain = [session(["listen"] * 4, [[], [], [], []])]
    assert takeover_delta_ci(paired_takeovers(plain, plain, "pause")) is None


def test_behaviour_vs_base_refuses_other_sessions():
    with pytest.raises(ValueError):
        behaviour_vs_base([session(["listen"] * 4, PAUSES)], [])
