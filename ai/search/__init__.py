"""The engines' thinking: evaluation, the alpha-beta lookahead, the move model, the MCTS (``mcts``)."""
