"""Games between players and their verdicts: matches (``match``), the referee, SPRT, tournaments."""
