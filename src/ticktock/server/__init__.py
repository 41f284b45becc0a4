"""Real-time serving (docs/design.md §8): WebSocket sessions, the browser page, a streaming client and a load test.

    ticktock serve --port 8765          # then open http://127.0.0.1:8765/
    ticktock talk --url ws://127.0.0.1:8765 --wav FILE

The wire protocol is documented in docs/protocol.md.
"""

from .app import Server, ServerConfig
from .wire import ProtocolError

__all__ = ["Server", "ServerConfig", "ProtocolError"]
