"""`blend_adapters.py`: merged(blend(A, B, w)) == w·merged(A) + (1-w)·merged(B), rows included.

Not collected by the main suite (`testpaths = ["tests"]`); run it with
`python -m pytest -q -p no:cacheprovider --rootdir . experiments/adapter_blend`.
"""

import copy
import sys
from pathlib import Path

import pytest
import torch

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[2] / "tests")]

from blend_adapters import blend  # noqa: E402
from test_adapter import write_adapter  # noqa: E402

from ticktock.model import DuplexLM, preset  # noqa: E402
from ticktock.model.adapter import merge_side_channel  # noqa: E402


def test_blended_adapters_merge_to_the_blend_of_the_merged_models(tmp_path):
    torch.manual_seed(1)
    base = DuplexLM(preset("test")).eval()
    write_adapter(tmp_path / "a", base, r=4, alpha=8, seed=0)
    write_adapter(tmp_path / "b", base, r=4, alpha=16, seed=1)
    blend(tmp_path / "a", tmp_path / "b", 0.3, tmp_path / "ab")
    merged = [merge_side_channel(copy.deepcopy(base), tmp_path / d) for d in ("a", "b", "ab")]
    for (name, a), (_, b), (_, ab) in zip(*(m.named_parameters() for m in merged)):
        assert torch.allclose(ab, 0.3 * a + 0.7 * b, atol=1e-4), name
    with pytest.raises(ValueError, match="within"):
        blend(tmp_path / "a", tmp_path / "b", 1.5, tmp_path / "bad")
