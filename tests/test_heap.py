"""settle_heap: what exists is frozen, so later collections do not walk it."""

import gc

from ticktock.session.heap import release_heap, settle_heap, settled_heap


def test_settled_objects_leave_the_collected_generations():
    kept = [[i] for i in range(1000)]  # tracked containers, alive across the call
    try:
        settle_heap()
        assert gc.get_freeze_count() >= len(kept)
        assert not any(o is kept for o in gc.get_objects())  # frozen objects are not in any generation
    finally:
        release_heap()
    assert gc.get_freeze_count() == 0
    with settled_heap():
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_freeze_count() == 0
