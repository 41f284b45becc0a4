from .kv import KVCache, Snapshot
from .policies import POLICIES, EvictionPolicy, NoEviction, make_policy

__all__ = ["KVCache", "Snapshot", "EvictionPolicy", "NoEviction", "POLICIES", "make_policy"]
