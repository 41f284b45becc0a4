"""Are the rare question forms learnt once they are drawn as often as the common ones? A CPU probe of `by_form`.

Registers two data presets, both requests read as text only (`read_share` 1: no rendering, so this CPU makes many
steps), with fresh phrasings, composed requests only, and no listening pre-training; they differ in how a composed
question is drawn:
- `read-forms`: form first, then a sentence (`fresh_phrasings(by_form=True)`, `intents.shapes.Shapes`);
- `read-pooled`: the control, a sentence from the pooled list (how every stage so far drew).

    python experiments/forms_cpu/run.py train INIT OUT SECONDS {read-forms|read-pooled}
    python experiments/probes/read_answers.py OUT/model [--set phrasings | --set shapes --match today]   # the measure

INIT is a model that already reads requests (retraining stage v1, experiments/retraining-plan.md); the measure is
what each run then reads: the premise-first and either-or forms of training's shapes, and `phrasings` read as text.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parents[1])]

from cpu_probe import continue_on_cpu  # noqa: E402
from ticktock.train.data import DATA_PRESETS, TrainingData  # noqa: E402

for name, by_form in (("read-forms", True), ("read-pooled", False)):
    DATA_PRESETS[name] = TrainingData(name, fresh_phrasings=True, composed_share=1.0, read_share=1.0, by_form=by_form)

if __name__ == "__main__":
    what = sys.argv[1]
    if what == "train":
        init, out, seconds, data = sys.argv[2:6]
        continue_on_cpu(out, seconds, data, 81, init=init, extra=("--set", "transcribe_share=0", "word_weight=0"))
    else:
        raise SystemExit(f"unknown step {what!r}: train")
