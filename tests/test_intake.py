"""The trainer's example intake: what workers make reaches the buffer, failures are counted and bounded."""

import time

import numpy as np
import pytest

from ticktock.train import intake as intake_mod
from ticktock.train.intake import ExampleIntake


def big_example(seed: int) -> np.ndarray:
    """Larger than a pipe holds (64 KB), as a training example is."""
    return np.full(200_000, seed % 251, dtype=np.uint8)


def failing_every_third(seed: int) -> np.ndarray:
    if seed % 3 == 0:
        raise ValueError(f"bad draw {seed}")
    return big_example(seed)


def always_failing(seed: int) -> np.ndarray:
    raise ValueError("no session fits")


def test_examples_larger_than_a_pipe_reach_the_buffer_without_polling():
    intake = ExampleIntake(big_example, n_workers=2, seed=0, capacity=8).start()
    try:
        intake.wait_for(8)
        while intake.made < 24:  # the buffer keeps the newest 8 while the count goes on
            intake.wait_for(8)
        assert len(intake.buffer) == 8 and intake.errors == 0
        assert all(ex.shape == (200_000,) for ex in intake.buffer)
    finally:
        intake.stop()


def test_ahead_holds_what_is_taken_in_to_what_was_drawn_plus_ahead():
    intake = ExampleIntake(big_example, n_workers=1, seed=0, capacity=8, ahead=8).start()
    try:
        intake.wait_for(8)
        time.sleep(0.5)  # the worker makes more; none is taken in before the trainer draws
        assert intake.made == 8
        intake.took(4)
        deadline = time.time() + 10
        while intake.made < 12 and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        assert intake.made == 12 and len(intake.buffer) == 8
    finally:
        intake.stop()


def test_failed_draws_are_counted_and_the_stream_goes_on():
    intake = ExampleIntake(failing_every_third, n_workers=1, seed=0, capacity=100).start()
    try:
        intake.wait_for(10)
        assert intake.errors >= 1 and "bad draw" in intake.last_error
    finally:
        intake.stop()


def test_workers_that_only_fail_stop_the_trainer(monkeypatch):
    monkeypatch.setattr(intake_mod, "MAX_ERRORS", 5)
    intake = ExampleIntake(always_failing, n_workers=1, seed=0, capacity=4).start()
    try:
        with pytest.raises(RuntimeError, match="keep failing: ValueError"):
            intake.wait_for(1)
    finally:
        intake.stop()
