"""A server on its own thread and event loop, for tests, the load test and notebooks.

    with BackgroundServer(ServerConfig(port=0)) as srv:
        ...  # talk to srv.url
"""

from __future__ import annotations

import asyncio
import threading

from ..runtime import Runtime
from .app import Server, ServerConfig


class BackgroundServer:
    def __init__(self, config: ServerConfig, runtime: Runtime | None = None, side_runtime: Runtime | None = None):
        self.server = Server(config, runtime, side_runtime)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="ticktock-server", daemon=True)
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"ws://{self.server.config.host}:{self.server.port}"

    @property
    def http_url(self) -> str:
        return f"http://{self.server.config.host}:{self.server.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self.server.start())
        except BaseException as err:  # e.g. the port is taken: reported by start()
            self._error = err
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> "BackgroundServer":
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def close(self) -> None:
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self.server.close(), self._loop).result(30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)

    def __enter__(self) -> "BackgroundServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
