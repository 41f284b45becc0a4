"""The trainer's prefetch (`TrainConfig.prefetch`): the next batch drawn and collated in a thread while the device
runs the step before it."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from ticktock.train.trainer import TrainConfig, train

from conftest import random_model
from trainer_stubs import example, head_loss, stack_collate


@pytest.mark.parametrize("prefetch", [False, True])
def test_prefetch_collates_off_the_main_thread_and_trains_every_step(prefetch, tmp_path):
    model = random_model(5, 64, std=0.1)
    on_main: list[bool] = []

    def collate(batch: list[np.ndarray], device) -> dict[str, torch.Tensor]:
        on_main.append(threading.current_thread() is threading.main_thread())
        return stack_collate(batch, device)

    cfg = TrainConfig(steps=6, batch=4, lr=1e-3, warmup=1, buffer=16, workers=1, log_every=1, prefetch=prefetch)
    threads_before = threading.active_count()
    log = train(model, example, 0, cfg, tmp_path, "cpu", loss_fn=head_loss, collate_fn=collate)
    assert [r["step"] for r in log] == list(range(1, 7)) and all(np.isfinite(r["loss"]) for r in log)
    # every batch was collated where the setting says; one drawn ahead of the last step may be left unused
    if prefetch:
        assert len(on_main) in (6, 7) and not any(on_main)
    else:
        assert on_main == [True] * 6
    assert threading.active_count() <= threads_before  # no pool thread outlives the run
