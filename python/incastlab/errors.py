"""User-facing errors: a bad parameter names itself, its value and what is allowed.

The CLI turns these into one line on stderr and exit status 2, never a traceback
(DESIGN.md, "Interfaces people already know").
"""


class UsageError(ValueError):
    """A parameter value a user gave is not allowed."""

    def __init__(self, param: str, value: object, allowed: str):
        self.param = param
        self.value = value
        self.allowed = allowed
        # a missing value is named as missing, not as "None is not allowed"
        given = "missing" if value is None else f"{value!r} is not allowed"
        super().__init__(f"{param}: {given}; expected {allowed}")


class EnvironmentProblem(RuntimeError):
    """The machine cannot do what was asked (not root, no such interface, ...).

    Reported like a UsageError (one line, exit status 2): it is not a bug in incastlab.
    """
