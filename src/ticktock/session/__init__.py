from .batch import BatchedSessions, BatchStep
from .clock import Clock, CostModelClock, WallClock, make_clock
from .result import UnitResult
from .session import DEFAULT_SYSTEM, DuplexSession
from .timeline import Timeline, UnitTiming

__all__ = ["BatchedSessions", "BatchStep", "Clock", "CostModelClock", "WallClock", "make_clock", "UnitResult", "DEFAULT_SYSTEM",
           "DuplexSession", "Timeline", "UnitTiming"]
