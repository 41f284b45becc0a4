"""The benchmark's stratified sample and its resumable parts."""

from __future__ import annotations

import pytest

from ticktock.bench.sample import part_of, stratified_sample

ENTRIES = [{"id": f"s{i}", "family": ["qa", "tool", "pause", "rare"][min(i % 7, 3)]} for i in range(70)]


def test_sample_covers_every_family_evenly_and_is_repeatable():
    got = stratified_sample(ENTRIES, 12, seed=3)
    fams = [e["family"] for e in got]
    assert len(got) == 12 and len({e["id"] for e in got}) == 12
    assert set(fams) == {"qa", "tool", "pause", "rare"}
    assert max(fams.count(f) for f in set(fams)) - min(fams.count(f) for f in set(fams)) <= 1
    assert [e["id"] for e in got] == [e["id"] for e in stratified_sample(ENTRIES, 12, seed=3)]
    assert [e["id"] for e in got] != [e["id"] for e in stratified_sample(ENTRIES, 12, seed=4)]
    ids = [int(e["id"][1:]) for e in got]
    assert ids == sorted(ids)  # suite order
    assert stratified_sample(ENTRIES, 500) == ENTRIES


def test_parts_cover_the_sessions_once():
    parts = [part_of(ENTRIES, f"{k}/4") for k in range(1, 5)]
    assert [e for p in parts for e in p] == ENTRIES
    for bad in ("0/4", "5/4", "x", "1/0"):
        with pytest.raises(ValueError, match="--part"):
            part_of(ENTRIES, bad)
