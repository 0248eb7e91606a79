"""Token buckets: the rate limiter of the client (so throttling stays rare) and of the sandbox
(so it throttles as AWS does). Pure: the clock is an argument, so tests need no sleeping."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class TokenBucket:
    """``rate`` tokens a second, at most ``capacity`` saved up (the burst AWS allows).

    A bucket starts full. :meth:`try_take` answers now (the sandbox: throttle or serve);
    :meth:`reserve` books the next token and says how long to wait for it (the client: sleep,
    then call), so waiting callers are served in the order they asked, each at its own slot.
    """

    rate: float
    capacity: float = 1.0
    _tokens: float = field(init=False)
    _updated: float | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.rate > 0:
            raise ValueError(f"a token bucket's rate must be positive, got {self.rate}")
        if not self.capacity >= 1:
            raise ValueError(f"a token bucket holds at least one token, got {self.capacity}")
        self._tokens = float(self.capacity)

    def _refill(self, now: float) -> None:
        if self._updated is not None and now > self._updated:
            self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
        if self._updated is None or now > self._updated:
            self._updated = now

    def try_take(self, now: float) -> bool:
        """Take a token if one is there at ``now``; False means the call is over the rate."""
        with self._lock:
            self._refill(now)
            if self._tokens >= 1:
                self._tokens -= 1
                return True
            return False

    def reserve(self, now: float) -> float:
        """Take the next token, going into debt if need be: seconds to wait before using it."""
        with self._lock:
            self._refill(now)
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate
