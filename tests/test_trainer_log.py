"""The trainer's log (`train_log.jsonl`): a record every `log_every` steps, the first step's and the last step's."""

from __future__ import annotations

import json

from ticktock.train.trainer import TrainConfig, train

from conftest import random_model
from trainer_stubs import example, head_loss, stack_collate


def test_the_last_step_is_logged_between_log_steps(tmp_path):
    """A run that ends between two log steps still records its last step (in the log and train_log.jsonl)."""
    model = random_model(5, 64, std=0.1)
    cfg = TrainConfig(steps=6, batch=4, lr=1e-3, warmup=1, buffer=16, workers=1, log_every=4)
    log = train(model, example, 0, cfg, tmp_path, "cpu", loss_fn=head_loss,
                collate_fn=stack_collate)
    written = [json.loads(line)["step"] for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == written == [1, 4, 6]
