"""The ``incastlab`` command line: one module per face, registered in ``main.COMMANDS``."""
