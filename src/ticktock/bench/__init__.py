"""Benchmarks: calibration profiles and the TickTock replay benchmark (DESIGN §7)."""
