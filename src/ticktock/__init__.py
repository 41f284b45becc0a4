"""ticktock: a runtime, benchmark and model kit for chunk-interleaved full-duplex speech LMs."""

__version__ = "0.1.0"
