"""The commands: one module per ``blokus`` subcommand, each with ``main(argv) -> int`` (``blokus`` is their
table); ``cli.options`` holds the parser and the option groups they share, ``cli.players`` the one parser of
player names. Nothing below this package imports it."""
