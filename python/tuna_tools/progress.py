"""Progress of long sweeps (`tuna sim run`, `tuna tune run`): a tqdm bar on stderr with the
time left, counting the configurations tuna-bench has written to its JSON lines. Off with
--quiet or when stderr is not a terminal, so tests and CI logs stay clean."""
import json
import os
import sys

from tqdm import tqdm


def shown(quiet):
    return not quiet and sys.stderr.isatty()


def sweep_bar(runs, quiet, desc):
    """A bar over `runs` tuna-bench runs whose sizes are learnt as they start (Sweep)."""
    return Sweep(runs, tqdm(total=None, desc=desc, unit="config", file=sys.stderr,
                            dynamic_ncols=True, disable=not shown(quiet)))


def note(text):
    """A line on stderr that does not break the bar."""
    tqdm.write(text, file=sys.stderr)


class Sweep:
    """Counts the records of a sequence of tuna-bench runs. Each run's size comes from its
    first record (run.count); the total is the sizes known so far plus the last one for
    every run not started yet, so the time left is an estimate that settles as runs start."""

    def __init__(self, runs, bar):
        self.runs, self.bar = runs, bar
        self.sizes = []       # configurations of each run started
        self.path = None
        self.offset = 0       # bytes of the current file before this run
        self.seen = 0         # records of the current run counted

    def start_run(self, path):
        """The next run appends to `path` (which may already hold earlier runs' lines)."""
        self.path = path
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0
        self.seen = 0
        self.sizes.append(None)

    def poll(self):
        """Count the records the current run has written since the last poll."""
        if self.bar.disable or not self.path or not os.path.exists(self.path):
            return
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            lines = f.read().split(b"\n")[:-1]  # complete lines only
        if lines and self.sizes[-1] is None:
            try:
                self.sizes[-1] = json.loads(lines[0])["run"]["count"]
            except (ValueError, KeyError, TypeError):
                self.sizes[-1] = len(lines)
            known = [s for s in self.sizes if s is not None]
            self.bar.total = sum(known) + known[-1] * (self.runs - len(self.sizes))
            self.bar.refresh()
        if len(lines) > self.seen:
            self.bar.update(len(lines) - self.seen)
            self.seen = len(lines)

    def close(self):
        self.poll()
        self.bar.close()
