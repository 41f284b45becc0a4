"""What a round of B sessions costs: one batched forward (`batched_forward`), one `SessionGraphs` forward (a CUDA
graph replay on a GPU, eager elsewhere) and B forwards each on its own engine, one new token per session on P
resident slots. On a GPU with `--engine fast` the per-session forwards replay CUDA graphs; this sets
`bench.live.BATCH_FROM` (batch from the B where one batched forward wins).

    python experiments/probes/batched_round_cost.py                                  # random shipped-size model, CPU
    python experiments/probes/batched_round_cost.py --model /tmp/w/tt8b --device cuda --dtype bfloat16 --engine fast
"""

import argparse
import time

import torch

from ticktock.engine import ENGINES, ForwardRequest, Segment, SessionGraphs, batched_forward, make_engine
from ticktock.model import DuplexLM, load_model, preset
from ticktock.protocol import SlotKind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="a model folder (default: a random `test`-preset model)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--engine", default="eager", choices=ENGINES)
    ap.add_argument("--sessions", default="1,2,4,8,16,32")
    ap.add_argument("--resident", type=int, default=512, help="slots already in each session's cache")
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    if args.model:
        model, _ = load_model(args.model, device=args.device, dtype=dtype)
    else:
        model = DuplexLM(preset("test")).eval().to(args.device, dtype)
    vocab = model.cfg.decoder.vocab_size
    sizes = [int(b) for b in args.sessions.split(",")]
    slots = args.resident + 4 * args.rounds + 256
    engines = [make_engine(model, args.engine, slots) for _ in range(max(sizes))]
    with torch.no_grad():
        for e in engines:
            e.forward([Segment(torch.randint(vocab, (args.resident,)), [int(SlotKind.TEXT)] * args.resident)], unit=0)
    tok = lambda: [Segment(torch.randint(vocab, (1,)), [int(SlotKind.TEXT)])]  # noqa: E731
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)

    def timed(fn, rounds: int) -> float:
        fn()  # first call: kernels, graphs
        sync()
        t = time.perf_counter()
        for _ in range(rounds):
            fn()
        sync()
        return (time.perf_counter() - t) / rounds * 1e3

    print(f"{'B':>3} {'batched ms':>11} {'session graphs ms':>18} {'one by one ms':>14}")
    with torch.no_grad():
        for b in sizes:
            group = engines[:b]
            batched = timed(lambda: batched_forward(model, [e.cache for e in group],
                                                    [ForwardRequest(tok(), unit=1) for _ in group]), args.rounds)
            graphs = SessionGraphs(model, [e.cache for e in group])
            graphed = timed(lambda: graphs.forward({i: ForwardRequest(tok(), unit=1) for i in range(b)}), args.rounds)
            alone = timed(lambda: [e.forward(tok(), unit=1) for e in group], args.rounds)
            print(f"{b:>3} {batched:>11.2f} {graphed:>18.2f} {alone:>14.2f}")


if __name__ == "__main__":
    main()
