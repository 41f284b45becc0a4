"""What each token of a session saw when the runtime wrote it into an evicting cache (docs/design.md §3–4).

The runtime never re-encodes: after `AcousticToText` evicts a unit's audio, the transcript and reply tokens
written while that audio was resident keep their keys and values, computed with it. A memory example laid
out compacted and run as one causal sequence (`memory_examples`) recomputes those tokens *without* the audio —
a context the runtime never produces. Training on it taught reading facts back that the closed loop could
not use (experiments/LOG.md: why the recall probe and the loop disagree).

The exact alternative: lay the session out whole and let token t attend to token s only if s was resident
when t was written. Writes happen in this order per unit k (`DuplexSession`, after_content and a
trailing segment check; budget small enough that eviction runs after every unit):

* time 2k − 1, `prepare`: the unit marker (with the pending `<|asr_end|>` of unit k − 1);
* time 2k, `step`: the audio, a tool result, and the unit's outputs but the last;
* eviction after the unit: the acoustic kinds of ledger unit k − R go;
* time 2k + 1, the slack: the last output (pending until then) and the trailing segment, whose own last
  token (`<|asr_end|>`) is written with the next marker and so carries the next unit in the ledger.

Ledger unit L's acoustic slots are gone from time 2(L + R) + 1 on. `visibility` turns these per-token
times into the (T, T) mask; a forward with it equals the runtime's cache token for token
(tests/test_kv_visibility.py).
"""

from __future__ import annotations

import numpy as np

NEVER = np.iinfo(np.int64).max // 4  # the eviction time of what is never evicted


def unit_schedule(k: int, n_head: int, n_inline: int, n_trailing: int, trailing_check: bool) -> tuple[list, list]:
    """(write times, ledger units) of unit k's tokens: `n_head` (marker, audio, tool result), `n_inline` outputs
    decoded in `step` (an inline segment included), `n_trailing` tokens of a trailing segment (0 if none).
    `trailing_check`: a segment check follows the unit (the session prefills the last output then, labelled k);
    without one the last output is prefilled with the next marker (labelled k + 1)."""
    write = [2 * k - 1] + [2 * k] * (n_head - 1) + [2 * k] * max(0, n_inline - 1)
    ledger = [k] * (n_head + max(0, n_inline - 1))
    if n_inline:
        write.append(2 * k + 1)
        ledger.append(k if trailing_check else k + 1)
    if n_trailing:
        write += [2 * k + 1] * n_trailing
        ledger += [k] * (n_trailing - 1) + [k + 1]
    return write, ledger


def eviction_times(ledger: np.ndarray, acoustic: np.ndarray, retention: int) -> np.ndarray:
    """(T,) the time each token leaves the cache: 2(L + R) + 1 for an acoustic token of ledger unit L ≥ 0, else never."""
    ledger, acoustic = np.asarray(ledger), np.asarray(acoustic, dtype=bool)
    return np.where(acoustic & (ledger >= 0), 2 * (ledger + retention) + 1, NEVER)


def visibility(write: np.ndarray, gone: np.ndarray) -> np.ndarray:
    """(T, T) bool: token t attends to token s ≤ t iff s was still resident when t was written."""
    write, gone = np.asarray(write), np.asarray(gone)
    return np.tri(len(write), dtype=bool) & (write[:, None] < gone[None, :])


__all__ = ["NEVER", "eviction_times", "unit_schedule", "visibility"]
