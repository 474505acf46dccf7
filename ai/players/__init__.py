"""Players: how a player is named and built (``registry``), the levels, programs (GTP engines) and a team's
code in processes of their own (``team_process``, the child ``pyplayer``, its API ``player_api``), our engines in a
worker process (``engine_process``), the clock (``controller``). The interface they all implement is
``ai.interface``; our engines' thinking is ``ai.search``."""
