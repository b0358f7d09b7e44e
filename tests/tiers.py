"""Does the fast tier (``./tasks quick``: the tests not marked slow) still reach every
module? Runs ``./tasks quick`` itself, as it is (its worker processes and the processes
they start measure themselves: coverage's ``COVERAGE_PROCESS_START``, which the
installed coverage honours in every Python of the .venv), and lists each module of the
referee and of taki_protocol in which no test of the tier ran a line inside a function
(a module without functions counts once imported); exits 1 when there is one. Prints
the tier's wall time and the machine's load average.

    .venv/bin/python tests/tiers.py [PYTEST ARGS...]
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "referee", ROOT / "protocol" / "taki_protocol")


def function_lines(path: Path) -> set[int]:
    """The lines of a module's function bodies."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for statement in node.body:
                lines.update(range(statement.lineno, (statement.end_lineno or 0) + 1))
    return lines


def unreached(data: coverage.CoverageData) -> list[str]:
    """The modules no line of whose functions ran (or, without functions, not loaded)."""
    ran = {Path(name).resolve(): set(data.lines(name) or ()) for name in data.measured_files()}
    missing = []
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            executed = ran.get(path.resolve())
            body = function_lines(path)
            if executed is None or (body and not executed & body):
                missing.append(str(path.relative_to(ROOT)))
    return missing


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        rc = Path(scratch) / "coveragerc"
        # _exit: a worker of pytest-xdist may leave through os._exit, after its last test.
        rc.write_text("[run]\nparallel = true\npatch =\n    subprocess\n    _exit\n"
                      f"data_file = {scratch}/.coverage\n"
                      f"source = {SOURCES[0]}\n    {SOURCES[1]}\n")
        env = {**os.environ, "COVERAGE_RCFILE": str(rc), "COVERAGE_PROCESS_START": str(rc)}
        began = time.monotonic()
        run = subprocess.run([str(ROOT / "tasks"), "quick", "-q", "-p", "no:cacheprovider",
                              *sys.argv[1:]], cwd=ROOT, env=env, check=False)
        seconds = time.monotonic() - began
        subprocess.run([sys.executable, "-m", "coverage", "combine", "-q"], cwd=ROOT,
                       env=env, check=True)
        cov = coverage.Coverage(config_file=str(rc))
        cov.load()
        missing = unreached(cov.get_data())
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    for module in missing:
        print(f"not reached by the fast tier: {module}")
    print(f"fast tier (under coverage): pytest exit status {run.returncode}, {seconds:.0f} s,"
          f" load average {load} ({os.cpu_count()} CPUs); modules not reached: {len(missing)}")
    return 1 if missing or run.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
