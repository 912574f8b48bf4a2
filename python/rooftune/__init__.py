"""rooftune's Python package: the tuned-schedule database from Python.

- Reader (librtdb through ctypes): `Reader(path).lookup(target, kernel,
  {"M": 1024, ...}, tag=None)` -> Lookup (match "exact" / "nearest" /
  "default", config dict, workload, pin version, time, distance), exactly
  what a C code generator gets from rtdb_lookup.
- Database (sqlite3, mode=ro): read-only records of targets, kernels,
  workloads, campaigns, trials, pins and tags as lists of dicts (or pandas
  DataFrames when pandas is importable); the columns are db/SCHEMA.md's.
- CLI: a thin wrapper of the rooftune program for campaigns (tune, resume,
  replay), T4 import/export, pins, tags and lookups.
"""
from ._rtdb import Lookup, NotFound, Reader, RtdbError, format_vars
from .cli import CLI, CLIError
from .records import SCHEMA_MAX, SCHEMA_MIN, Database, DatabaseError, flatten, frame

__version__ = "0.1.0"
__all__ = ["Reader", "Lookup", "RtdbError", "NotFound", "format_vars", "Database",
           "DatabaseError", "frame", "flatten", "CLI", "CLIError", "SCHEMA_MIN", "SCHEMA_MAX",
           "__version__"]
