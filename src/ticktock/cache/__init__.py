from .kv import KVCache, Snapshot
from .policies import POLICIES, AcousticToText, EvictionPolicy, NoEviction, StreamingLLM, UnitDrop, make_policy

__all__ = ["KVCache", "Snapshot", "EvictionPolicy", "NoEviction", "StreamingLLM", "UnitDrop", "AcousticToText",
           "POLICIES", "make_policy"]
