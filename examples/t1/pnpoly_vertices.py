#!/usr/bin/env python3
"""pnpoly_vertices.py [OUT] -- write the polygon of pnpoly.json: 600 float32
(x, y) pairs, little-endian, 4,800 bytes (default OUT: pnpoly_vertices.bin
beside this script).

The polygon is star-shaped around the origin, hence simple: 600 angles
drawn uniformly in [0, 2 pi) and sorted, each vertex at radius 0.5 + 0.5 u
(u uniform in [0, 1)), so that points uniform in [-1, 1)^2 (rooftune's
default random fill) fall inside and outside it. Deterministic: Python's
Mersenne Twister seeded with 600 (random.random() is stable across Python
versions for an int seed). The file is committed; this script says how it
was made and remakes it byte for byte."""
import math
import os
import random
import struct
import sys

VERTICES = 600


def vertices():
    rng = random.Random(VERTICES)
    angles = sorted(rng.random() * 2.0 * math.pi for _ in range(VERTICES))
    radii = [0.5 + 0.5 * rng.random() for _ in range(VERTICES)]
    return [(r * math.cos(a), r * math.sin(a)) for a, r in zip(angles, radii)]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "pnpoly_vertices.bin")
    data = b"".join(struct.pack("<ff", x, y) for x, y in vertices())
    assert len(data) == VERTICES * 8
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
