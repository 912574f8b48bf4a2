"""A thin wrapper of the rooftune command line: campaigns (tune, resume,
replay), T4 import and export, pins and lookups, each one run of the
program with an argument vector (never shell text), its --json output
parsed. The CLI stays the one implementation: imports are checked and
stored all-or-nothing by `rooftune db import`, exports written by `rooftune
db export` (valid against the T4 1.0.0 results schema).

Which program: the `exe` argument, else $ROOFTUNE, else `rooftune` on
PATH. A failing command raises CLIError with its exit status (1: the
inputs are wrong, 2: a usage error, 130: interrupted; README's table) and
its standard error.
"""
import json
import os
import shutil
import subprocess


class CLIError(Exception):
    """A rooftune command that exited non-zero: .rc, .stderr, .argv."""

    def __init__(self, argv, rc, stderr):
        self.argv, self.rc, self.stderr = argv, rc, stderr
        super().__init__("%s exited with status %d: %s" % (" ".join(argv[:3]), rc,
                                                            stderr.strip()))


def _set_text(values):
    """--set text from a dict or a str as given. --set values are Python
    literals: {"M": 1024, "layout": "nchw"} -> "M=1024,layout='nchw'"."""
    if values is None or isinstance(values, str):
        return values
    parts = []
    for k, v in values.items():
        if not isinstance(v, (bool, int, float, str)):
            raise TypeError("--set %s: %r is not an int, float, bool or str" % (k, v))
        parts.append("%s=%r" % (k, v))
    return ",".join(parts)


class CLI:
    """rooftune commands on one database (db: its path; None: rooftune.db in
    the working directory, as the CLI defaults)."""

    def __init__(self, db=None, exe=None):
        self.exe = exe or os.environ.get("ROOFTUNE") or shutil.which("rooftune")
        if not self.exe:
            raise FileNotFoundError("no rooftune program: pass exe=, set ROOFTUNE, or put "
                                    "rooftune on PATH (make install)")
        self.db = db

    def run(self, *args, parse_json=True, cwd=None):
        """Run `rooftune ARGS...` (with --db when this wrapper has one and
        the command takes it); its stdout parsed as JSON (parse_json), else
        as text. CLIError when it exits non-zero."""
        argv = [self.exe] + [str(a) for a in args]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                           stdin=subprocess.DEVNULL)
        out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
        if r.returncode:
            raise CLIError(argv, r.returncode, err)
        return json.loads(out) if parse_json else out

    def _db(self):
        return ["--db", self.db] if self.db else []

    @staticmethod
    def _opts(**kw):
        """--name value for each keyword not None (underscores as dashes);
        True: the flag alone; False: nothing."""
        out = []
        for k, v in kw.items():
            if v is None or v is False:
                continue
            out.append("--" + k.replace("_", "-"))
            if v is not True:
                out.append(_set_text(v) if k == "set" else v)
        return out

    # ---- campaigns ----

    def tune(self, kernel=None, target=None, set=None, t1=None, space=None, strategy=None,
             budget=None, seed=None, time_limit=None, batch=None, no_pin=False, extra=()):
        """Run a tuning campaign (rooftune tune --json); its report as a dict
        (campaign, best, default, baseline, decision, pin_version, ...).
        extra: more arguments as given (harness options: "--time-cap", "0.1")."""
        return self.run("tune", *self._db(), *self._opts(
            kernel=kernel, target=target, set=set, t1=t1, space=space, strategy=strategy,
            budget=budget, seed=seed, time_limit=time_limit, batch=batch, no_pin=no_pin),
            *extra, "--json")

    def resume(self, campaign, no_pin=False, extra=()):
        """Continue a stopped or killed campaign to its budget (tune --resume)."""
        return self.run("tune", *self._db(), "--resume", campaign,
                        *self._opts(no_pin=no_pin), *extra, "--json")

    def replay(self, strategy, t4=None, kernel=None, target=None, campaign=None, space=None,
               set=None, budget=None, seed=None, extra=()):
        """Replay a strategy on recorded results (a T4 file, or this
        database's trials of kernel or of campaign); its report as a dict."""
        db = [] if t4 else self._db()
        return self.run("replay", *db, *self._opts(
            t4=t4, kernel=kernel, target=target, campaign=campaign, space=space, set=set,
            strategy=strategy, budget=budget, seed=seed), *extra, "--json")

    # ---- T4 in and out ----

    def import_t4(self, path, target, kernel=None, space=None, set=None, dtype=None,
                  kt_cache=False):
        """Import a T4 results file (kt_cache=True: a Kernel Tuner cache file)
        as one campaign, all or nothing; the new campaign's id."""
        fmt = "--kt-cache" if kt_cache else "--t4"
        out = self.run("db", "import", *self._db(), fmt, path, *self._opts(
            target=target, kernel=kernel, space=space, set=set, dtype=dtype),
            parse_json=False)
        # "imported N trials as campaign C: ..."
        words = out.split()
        if len(words) < 5 or words[0] != "imported" or words[3] != "as" or \
                words[4] != "campaign":
            raise CLIError(["rooftune", "db", "import"], 0, "unexpected output: " + out)
        return int(words[5].rstrip(":"))

    def export_t4(self, target, kernel, set=None, out=None, format="t4"):
        """The trials of (target, kernel[, the workload --set selects]) as a
        T4 results document (a dict); out=PATH writes the file instead (the
        CLI's output rule: complete or untouched) and returns PATH.
        format: also "json", "csv" (text), "kt-cache"."""
        args = ["db", "export", *self._db(), *self._opts(target=target, kernel=kernel, set=set,
                                                         format=format, out=out)]
        if out:
            self.run(*args, parse_json=False)
            return out
        return self.run(*args, parse_json=format != "csv")

    # ---- pins and lookups ----

    def pin(self, target, kernel, set=None, trial=None, reason=None):
        """Pin a verified trial (default: the fastest) as the next version."""
        return self.run("db", "pin", *self._db(), *self._opts(
            target=target, kernel=kernel, set=set, trial=trial, reason=reason,
            best=trial is None), "--json")

    def tag(self, name, note=None):
        """Bind the current pins of every workload to release `name`."""
        return self.run("db", "tag", *self._db(), *self._opts(name=name, note=note), "--json")

    def lookup(self, target, kernel, set, tag=None):
        """`rooftune db lookup --json`: what the reader library answers."""
        return self.run("db", "lookup", *self._db(), *self._opts(
            target=target, kernel=kernel, set=set, tag=tag), "--json")
