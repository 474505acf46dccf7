"""The engines' thinking: evaluation, greedy, the alpha-beta lookahead, the move model, the MCTS (``mcts``), and
how their compiled kernels are loaded (``compiled``). Below ``ai.players``: nothing here imports it."""
