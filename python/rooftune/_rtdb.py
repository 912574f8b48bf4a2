"""The reader library (librtdb, db/rtdb.h) through ctypes: rtdb_lookup as a
code generator calls it, from Python.

The one mirror of `rtdb_result` is RESULT_FIELDS below: db/rtdb.h is the
contract, and fields appended there are appended here (in the same order);
python/tests/test_lookup.py compiles a C program that prints the struct's size
and offsets and compares them with this mirror, so a difference fails the
tests instead of corrupting memory.

Which library: the `library` argument, else $ROOFTUNE_LIBRTDB, else
librtdb.so.1 / librtdb.so as the dynamic loader finds them (an installed
rooftune: `make install PREFIX=P` puts it in P/lib; add P/lib to
LD_LIBRARY_PATH or pass library=).
"""
import ctypes
import ctypes.util
import json
import math
import os
import threading

# db/rtdb.h's constants (its enums and #defines).
RTDB_MAXCONFIG = 4096
RTDB_MAXKEY = 512
ERRORS = {
    1: "RTDB_ERROR", 2: "RTDB_CANTOPEN", 3: "RTDB_NOTADB", 4: "RTDB_SCHEMA",
    5: "RTDB_NOTFOUND", 6: "RTDB_MISUSE", 7: "RTDB_NOMEM", 8: "RTDB_READONLY",
}
RTDB_NOTFOUND = 5
MATCHES = {1: "exact", 2: "nearest", 3: "default"}
LEVELS = {1: "target", 2: "model", 3: "arch", 4: "backend", 5: "default"}   # rtdb_level

# The mirror of struct rtdb_result, field by field (names as in rtdb.h).
# APPEND new fields at the end, as rtdb.h appends them.
RESULT_FIELDS = [
    ("match", ctypes.c_int),                       # rtdb_match (an enum: int)
    ("config", ctypes.c_char * RTDB_MAXCONFIG),
    ("workload", ctypes.c_char * RTDB_MAXKEY),
    ("pin_version", ctypes.c_int),
    ("time_s", ctypes.c_double),
    ("distance", ctypes.c_double),
    # appended with target families (schema 8)
    ("level", ctypes.c_int),                       # rtdb_level (an enum: int)
    ("target", ctypes.c_char * RTDB_MAXKEY),
    ("fingerprint", ctypes.c_char * RTDB_MAXKEY),
    # appended with model-only targets (schema 10): made from a prediction
    ("predicted", ctypes.c_int),
]


class RtdbResult(ctypes.Structure):
    _fields_ = RESULT_FIELDS


class RtdbTarget(ctypes.Structure):
    """struct rtdb_target: the caller's family chain (rtdb_lookup_on)."""
    _fields_ = [("name", ctypes.c_char_p), ("fingerprint", ctypes.c_char_p),
                ("model", ctypes.c_char_p), ("arch", ctypes.c_char_p),
                ("backend", ctypes.c_char_p), ("max_level", ctypes.c_int)]


class RtdbError(Exception):
    """A librtdb call that did not return RTDB_OK: .code (the number),
    .name (RTDB_...), and the library's message."""

    def __init__(self, code, message):
        self.code = code
        self.name = ERRORS.get(code, "code %d" % code)
        super().__init__("%s: %s" % (self.name, message))


class NotFound(RtdbError):
    """RTDB_NOTFOUND: an unknown kernel or tag, or no pin and no default."""


_libs = {}
_libs_lock = threading.Lock()


def _load(library=None):
    """The librtdb CDLL with its functions typed (loaded once per path)."""
    names = [library] if library else (
        [os.environ["ROOFTUNE_LIBRTDB"]] if os.environ.get("ROOFTUNE_LIBRTDB") else
        ["librtdb.so.1", "librtdb.so"] + ([ctypes.util.find_library("rtdb")]
                                          if ctypes.util.find_library("rtdb") else []))
    with _libs_lock:
        errors = []
        for name in names:
            if name in _libs:
                return _libs[name]
            try:
                lib = ctypes.CDLL(name)
            except OSError as e:
                errors.append("%s: %s" % (name, e))
                continue
            vp, cp = ctypes.c_void_p, ctypes.c_char_p
            lib.rtdb_open_msg.argtypes = [cp, ctypes.POINTER(vp), ctypes.c_char_p, ctypes.c_size_t]
            lib.rtdb_open_msg.restype = ctypes.c_int
            lib.rtdb_close.argtypes = [vp]
            lib.rtdb_close.restype = ctypes.c_int
            lib.rtdb_errmsg.argtypes = [vp]
            lib.rtdb_errmsg.restype = cp
            lib.rtdb_errstr.argtypes = [ctypes.c_int]
            lib.rtdb_errstr.restype = cp
            lib.rtdb_lookup.argtypes = [vp, cp, cp, cp, cp, ctypes.POINTER(RtdbResult)]
            lib.rtdb_lookup.restype = ctypes.c_int
            lib.rtdb_lookup_on.argtypes = [vp, ctypes.POINTER(RtdbTarget), cp, cp, cp,
                                           ctypes.POINTER(RtdbResult)]
            lib.rtdb_lookup_on.restype = ctypes.c_int
            _libs[name] = lib
            return lib
        raise OSError("cannot load the rooftune reader library (librtdb): %s; build it "
                      "(make build/librtdb.so) or install it (make install), then set "
                      "ROOFTUNE_LIBRTDB=/path/to/librtdb.so or pass library="
                      % "; ".join(errors))


def format_vars(variables):
    """The vars text rtdb_lookup reads ("M=1024,N=1024,dtype='f32'") from a
    dict (ints, floats, bools, strings) or a str (returned as it is)."""
    if isinstance(variables, str):
        return variables
    parts = []
    for name, value in variables.items():
        if isinstance(value, bool):
            text = "True" if value else "False"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, float):
            if math.isnan(value):
                raise ValueError("variable %s: NaN is no workload size" % name)
            text = repr(value)
        elif isinstance(value, str):
            text = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        else:
            raise TypeError("variable %s: %r is not an int, float, bool or str"
                            % (name, value))
        parts.append("%s=%s" % (name, text))
    return ",".join(parts)


class Lookup:
    """What rtdb_lookup answered: match ("exact", "nearest", "default"), the
    schedule (config: a dict; config_json: its canonical text), the
    workload it was tuned for ("" for defaults), pin_version (0 for
    defaults), time_s (None when unknown) and distance (None unless
    nearest); the family level that answered ("target", "model", "arch",
    "backend", "default") and the target whose pin it is (target and
    fingerprint, "" for defaults); predicted (True when the pin was made
    from a model-only target's prediction: the schedule never ran there,
    time_s is predicted). Every field of rtdb_result is in .fields (name ->
    value)."""

    def __init__(self, r):
        self.fields = {}
        for name, _ in RESULT_FIELDS:
            v = getattr(r, name)
            self.fields[name] = v.decode("utf-8") if isinstance(v, bytes) else v
        self.match = MATCHES.get(r.match, "unknown %d" % r.match)
        self.config_json = self.fields["config"]
        self.config = json.loads(self.config_json)
        self.workload = self.fields["workload"]
        self.pin_version = r.pin_version
        self.time_s = r.time_s if r.time_s >= 0 else None
        self.distance = r.distance if r.match == 2 else None
        self.level = LEVELS.get(r.level, "unknown %d" % r.level)
        self.target = self.fields["target"]
        self.fingerprint = self.fields["fingerprint"]
        self.predicted = bool(r.predicted)

    def as_dict(self):
        return {"match": self.match, "config": self.config, "workload": self.workload,
                "pin_version": self.pin_version, "time_s": self.time_s,
                "distance": self.distance, "level": self.level, "target": self.target,
                "fingerprint": self.fingerprint, "predicted": self.predicted}

    def __repr__(self):
        return "Lookup(%r)" % (self.as_dict(),)


class Reader:
    """A read-only librtdb handle on a database file (rtdb.h: the file is
    never written; one handle serves several threads). Use as a context
    manager or call close()."""

    def __init__(self, path, library=None):
        self._lib = _load(library)
        self._h = ctypes.c_void_p()
        msg = ctypes.create_string_buffer(1024)
        rc = self._lib.rtdb_open_msg(os.fsencode(path), ctypes.byref(self._h), msg, len(msg))
        if rc:
            self._h = None
            raise RtdbError(rc, msg.value.decode("utf-8", "replace"))
        self.path = path

    def lookup(self, target, kernel, variables, tag=None, on=None):
        """The schedule of kernel on target for these problem variables
        (a dict or rtdb's "VAR=VALUE,..." text); tag: a release, or None
        for the current pins. on: the caller's family chain, a dict with
        any of fingerprint, model, arch, backend (str) and max_level (int,
        0 = up to the architecture): rtdb_lookup_on falls back along it
        (db/rtdb.h); target may then be None. Raises NotFound for an
        unknown kernel or tag (or nothing to fall back to), RtdbError for
        other failures."""
        if self._h is None:
            raise RtdbError(6, "the reader is closed")
        out = RtdbResult()
        vars_ = format_vars(variables).encode()
        tag_ = tag.encode() if tag is not None else None
        if on is None:
            rc = self._lib.rtdb_lookup(self._h, target.encode(), kernel.encode(), vars_, tag_,
                                       ctypes.byref(out))
        else:
            unknown = set(on) - {"fingerprint", "model", "arch", "backend", "max_level"}
            if unknown:
                raise TypeError("on: unknown keys %s" % sorted(unknown))
            enc = lambda k: on[k].encode() if on.get(k) is not None else None
            t = RtdbTarget(target.encode() if target is not None else None, enc("fingerprint"),
                           enc("model"), enc("arch"), enc("backend"),
                           int(on.get("max_level", 0)))
            rc = self._lib.rtdb_lookup_on(self._h, ctypes.byref(t), kernel.encode(), vars_,
                                          tag_, ctypes.byref(out))
        if rc:
            msg = (self._lib.rtdb_errmsg(self._h) or b"").decode("utf-8", "replace")
            raise (NotFound if rc == RTDB_NOTFOUND else RtdbError)(rc, msg)
        return Lookup(out)

    def close(self):
        if self._h is not None:
            self._lib.rtdb_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
