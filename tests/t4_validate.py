#!/usr/bin/env python3
"""t4_validate.py SCHEMA FILE... -- validate T4 results files (plain or
gzip) against a JSON schema (tests/data/t4-results-schema-1.0.0.json) with
the jsonschema package, for tests/test_interchange.c.

Prints "FILE: valid, N results" per file, or the first error with its JSON
path. Exit 0 when every file is valid, 1 when one is not, 77 when the
jsonschema package is missing (Debian: python3-jsonschema)."""
import gzip
import json
import sys

try:
    import jsonschema
except ImportError:
    print("t4_validate.py: the jsonschema package is missing "
          "(apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(77)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema = load(sys.argv[1])
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    bad = 0
    for path in sys.argv[2:]:
        doc = load(path)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            e = errors[0]
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.path)
            print(f"{path}: INVALID ({len(errors)} errors), first at {where or '(root)'}: "
                  f"{e.message}")
            bad += 1
        else:
            print(f"{path}: valid ({cls.__name__}, jsonschema {jsonschema_version()}), "
                  f"{len(doc.get('results', []))} results")
    return 1 if bad else 0


def jsonschema_version():
    try:
        from importlib.metadata import version
        return version("jsonschema")
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
