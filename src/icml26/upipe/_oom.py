"""A collective out-of-memory flag: when one rank runs out of memory, every rank stops within seconds.

Context parallelism puts a collective in every layer, so a rank that hits ``torch.OutOfMemoryError`` leaves
its peers blocked in the next all-to-all, waiting for a partner that will never come: NCCL (and gloo) then
wait out the process group's timeout, ten minutes by default, and a launcher that does not watch its
workers waits with them.  :class:`CollectiveOOMGuard` turns that into a prompt, explained stop:

* the rank that runs out writes ``"rank r: <message>"`` under a key of the process group's store (the
  rendezvous store every rank already shares) and re-raises the error;
* every rank runs a small watcher thread that polls the key every ``poll_s`` seconds; when it appears, the
  watcher prints which rank ran out and ends its own process with ``exit_code`` (a thread cannot interrupt
  a collective that is waiting in C++, so ending the process is the only prompt way out).

```python
with CollectiveOOMGuard():
    loss = model(tokens, positions).sum()
    loss.backward()
```
"""

from __future__ import annotations

import os
import sys
import threading

import torch
import torch.distributed as dist

__all__ = ["CollectiveOOMGuard", "OOM_EXIT_CODE"]

OOM_EXIT_CODE = 75  # the exit status of a rank stopped because a peer ran out of memory


class CollectiveOOMGuard:
    """Stop every rank within ``poll_s`` seconds once any rank raises ``torch.OutOfMemoryError`` in the block.

    ``store``: a ``torch.distributed.Store`` shared by the ranks (default: the default process group's);
    ``key``: the store key used as the flag (use one key per job step if the guard is entered repeatedly
    and an earlier flag must not count).  Without an initialised process group the guard does nothing.
    """

    def __init__(
        self, store=None, key: str = "icml26/upipe/oom", poll_s: float = 0.5, exit_code: int = OOM_EXIT_CODE
    ) -> None:
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        if not poll_s > 0:
            raise ValueError(f"poll_s must be > 0, got {poll_s}")
        if isinstance(exit_code, bool) or not isinstance(exit_code, int) or not 1 <= exit_code <= 255:
            raise ValueError(f"exit_code must be an int in [1, 255], got {exit_code!r}")
        self.key, self.poll_s, self.exit_code = key, float(poll_s), exit_code
        self._store = store
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.rank = 0

    def _active(self) -> bool:
        return self._store is not None or (dist.is_available() and dist.is_initialized())

    def __enter__(self) -> CollectiveOOMGuard:
        if not self._active():
            return self
        if self._store is None:
            self._store = dist.distributed_c10d._get_default_store()
        self.rank = dist.get_rank() if dist.is_initialized() else 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name="collective-oom-watch", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            try:
                flagged = self._store.check([self.key])
            except Exception:  # the store went away (the job is ending): nothing left to watch
                return
            if flagged and not self._stop.is_set():
                who = self._store.get(self.key).decode(errors="replace")
                print(
                    f"[rank {self.rank}] stopping: a peer ran out of memory ({who}); exit {self.exit_code}",
                    file=sys.stderr,
                    flush=True,
                )
                os._exit(self.exit_code)

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5 * self.poll_s)
            self._thread = None
        if exc_type is not None and issubclass(exc_type, torch.OutOfMemoryError) and self._store is not None:
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else "OutOfMemoryError"
            self._store.set(self.key, f"rank {self.rank}: {first_line}")
        return False  # the error propagates on the rank that ran out
