"""Load a trace-analysis script of ``scripts/`` (``scripts/NAME.py``, not a package module)
as a module, so a test can call its functions and its ``main``."""

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py``, executed once per call (each test gets a fresh module)."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def assert_refuses_a_line_that_is_not_an_event(name: str, tmp_path, capsys) -> None:
    """``scripts/<name>.py`` on a trace whose line is not an event: one line on stderr naming
    the file, and status 2 (the trace tools' shared ``tracediff.each_trace``)."""
    p = tmp_path / "bad.csv"
    p.write_text("not,a\n")
    assert load_script(name).main([str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.csv" in err
