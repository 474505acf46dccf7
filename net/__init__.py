"""Networking: the client connection, the headless bot and the local game server.

* ``net.connection`` — ``Connection``: asyncio TCP client of the official protocol; the incoming stream
  as typed events (``Joined``, ``Welcome``, ``StateChanged``, ``MoveRequested``, ``GameOver``,
  ``ServerError``, ``Left``, ``Ignored``, ``Sent``, and always a final ``Closed``), each with its raw XML.
* ``net.bot`` — ``Bot`` and ``BotOptions``: the headless player of ``blokus bot`` (``cli.bot``), used by ``start.sh``.
* ``net.rooms`` — game rooms of the local server (rules, time limits, results) without sockets.
* ``net.wire`` — what the server sends, serialized through ``model.messages``.
* ``net.server`` — ``GameServer``, ``ServerConfig``, ``serve(config)`` (``blokus serve``: ``cli.serve``).

Nothing here imports Textual.
"""
