"""Benchmarks: calibration profiles and the TickTock replay benchmark (docs/design.md §7)."""
