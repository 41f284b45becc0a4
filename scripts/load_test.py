"""Load test of `ticktock serve` on loopback: 8 clients x 60 s of held-out audio in real time, `ar` then `sl`.

    .venv/bin/python scripts/load_test.py [--clients 8] [--seconds 60] [--decoders ar,sl] [--json]

See `ticktock.server.loadtest` for what it checks and reports.
"""

import sys

from ticktock.server.loadtest import main

if __name__ == "__main__":
    sys.exit(main())
