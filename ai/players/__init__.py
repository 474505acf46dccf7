"""Players: how a player is named and built (``registry``), the ``Player`` interface (``base``),
the built-in players, programs and a team's code in processes of their own, the clock (``controller``)."""
