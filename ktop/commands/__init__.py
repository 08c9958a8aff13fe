"""Non-interactive subcommands, one module each (``add_parser`` and ``run``)."""
