"""The command line: argument helpers shared by every subcommand (``cli.args``) and ``blokus moves``."""
