"""Subcommands with their own modules: each has ``add_parser(subparsers)`` and ``run(args)``."""
