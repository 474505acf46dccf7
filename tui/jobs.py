"""Background jobs of the screens: coroutine functions run in Textual workers."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from textual.dom import DOMNode
from textual.worker import Worker


def start_job(
    node: DOMNode, work: Callable[[], Coroutine[Any, Any, None]], *, group: str, exclusive: bool = False
) -> Worker[None]:
    """Run ``work`` in a worker of ``node`` (its errors do not end the app: the job reports them itself).

    ``work`` is a function, not a coroutine: a worker that never starts (the app quits in the same frame)
    then leaves no coroutine behind that was never awaited (a ``RuntimeWarning`` at exit)."""
    return node.run_worker(work, group=group, exclusive=exclusive, exit_on_error=False)
