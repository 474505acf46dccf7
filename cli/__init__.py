"""The commands: one module per ``blokus`` subcommand, each with ``main(argv) -> int`` (``blokus`` is their
table); ``cli.options`` holds the parser and the option groups they share, ``cli.players`` the one parser of
player names. ``cli.bundle`` is a package: the command (``blokus bundle``) and its work, the contest upload
(``build``: the zip; ``team_files``: what a team's player needs packed; ``trial``: the upload tried as the contest
starts it): packaging, no network of its own. Nothing below this package imports it."""
