"""What the study run scripts (experiments/<study>/run) share: finding a study's experiment files by name or
number, the dtsim binary, temporary shortened copies, and running dtsim with its output echoed.

A run script imports it with `sys.path.insert(0, os.path.dirname(HERE))` (HERE: the study's directory).
"""
import glob
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTSIM = os.path.join(ROOT, "build", "experiments", "dtsim")


def experiments(here, prefix):
    """The study's experiment files (prefix + number + '_...json'), in number order, as stems."""
    names = [os.path.splitext(os.path.basename(f))[0] for f in glob.glob(os.path.join(here, prefix + "[0-9]*_*.json"))]
    return sorted(names, key=lambda n: int(n[len(prefix):].split("_")[0]))


def resolve(name, names, extra=()):
    """An experiment stem from its stem or its tag (the part before the first '_'); extra: tags without a file."""
    if name in names or name in extra:
        return name
    hits = [n for n in names if n.split("_")[0] == name]
    if len(hits) == 1:
        return hits[0]
    raise SystemExit(f"run: unknown experiment '{name}' (known: {', '.join(list(names) + list(extra))}, all)")


def check_dtsim(path):
    """The dtsim binary's absolute path, or exit with how to build it."""
    if not os.access(path, os.X_OK):
        raise SystemExit(f"run: no dtsim binary at {path}; build it first: "
                         "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build --target dtsim")
    return os.path.abspath(path)


def load(path):
    with open(path) as f:
        return json.load(f)


def temp_copy(j, here, stem):
    """A copy of experiment j next to the originals (so that relative platform paths still resolve); the caller
    removes it. Its name starts with '.', which the golden tests' study_files() skip."""
    fd, tmp = tempfile.mkstemp(prefix=f".{stem}.quick-", suffix=".json", dir=here)
    with os.fdopen(fd, "w") as f:
        json.dump(j, f, indent=1)
    return tmp


def echo_run(cmd, env=None):
    """Runs a command from the repository root, echoing what it prints, indented; returns its exit code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=env)
    for line in proc.stdout:
        print("  " + line.rstrip(), flush=True)
    return proc.wait()


def run_or_exit(cmd, what, env=None):
    code = echo_run(cmd, env)
    if code != 0:
        raise SystemExit(f"run: {what} failed (exit code {code}; command: {' '.join(cmd)})")
