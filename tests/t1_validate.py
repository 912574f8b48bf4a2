#!/usr/bin/env python3
"""t1_validate.py SCHEMA FILE... -- validate T1 files against the T1 JSON
schema (tests/data/TuningSchema.json) with the jsonschema package.

The schema types an argument's Size and FillValue and the kernel's
SharedMemory as numbers; rooftune also reads them as expressions over the
problem variables and parameters (a string: "M * K"), its one extension
inside KernelSpecification, which the benchmark hub's own T1 files use too.
A schema error at one of those fields whose value is a string is therefore
reported as that extension, not as an error.

Prints "FILE: valid" or "FILE: valid with rooftune expressions (FIELD, ...)"
per file, or every other error with its JSON path. Exit 0 when every file
is valid, 1 when one is not, 77 when the jsonschema package is missing
(Debian: python3-jsonschema)."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("t1_validate.py: the jsonschema package is missing "
          "(apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(77)

EXPRESSION_FIELDS = ("Size", "FillValue", "SharedMemory")


def where(error):
    return ".".join(str(p) if isinstance(p, str) else "[%d]" % p
                    for p in error.absolute_path).replace(".[", "[")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    bad = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        ext = [e for e in errors if e.absolute_path and e.absolute_path[-1] in EXPRESSION_FIELDS
               and isinstance(e.instance, str) and e.validator == "type"]
        real = [e for e in errors if e not in ext]
        if real:
            bad += 1
            for e in real:
                print("%s: %s: %s" % (path, where(e) or "(top)", e.message))
        elif ext:
            print("%s: valid with rooftune expressions (%s)"
                  % (path, ", ".join(where(e) for e in ext)))
        else:
            print("%s: valid" % path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
