"""Background jobs of the screens: coroutine functions run in Textual workers, and ``Jobs``, what a screen's plain
objects (the AI, the link to a server, the menu, a team's program) may use of it."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from textual.app import App
from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker


def start_job(
    node: DOMNode, work: Callable[[], Coroutine[Any, Any, None]], *, group: str, exclusive: bool = False
) -> Worker[None]:
    """Run ``work`` in a worker of ``node`` (its errors do not end the app: the job reports them itself).

    ``work`` is a function, not a coroutine: a worker that never starts (the app quits in the same frame)
    then leaves no coroutine behind that was never awaited (a ``RuntimeWarning`` at exit)."""
    return node.run_worker(work, group=group, exclusive=exclusive, exit_on_error=False)


class Jobs:
    """A screen as its plain objects see it: they run background jobs in its workers and post it messages (what
    happened), and may open dialogs on its app; its widgets and its methods stay the screen's own."""

    def __init__(self, node: DOMNode) -> None:
        self._node = node

    @property
    def app(self) -> App:
        return self._node.app

    def start(
        self, work: Callable[[], Coroutine[Any, Any, None]], *, group: str, exclusive: bool = False
    ) -> Worker[None]:
        return start_job(self._node, work, group=group, exclusive=exclusive)

    def cancel(self, group: str) -> None:
        self._node.workers.cancel_group(self._node, group)

    def post(self, message: Message) -> bool:
        """Post ``message`` to the screen (False once it is closed)."""
        return self._node.post_message(message)
