#!/usr/bin/env python3
"""make_shifts.py [OUT] -- write the dedispersion kernel's channel shifts,
1536 float32 values, little-endian, 6,144 bytes (default OUT:
dedispersion_shifts.f32 beside this script), which data/t1k/dedispersion.json
reads (FillType BinaryRaw).

The values are get_shifts() of the benchmark hub's dedisp_milo/
dedispersion_milo.py, computed as NumPy computes them there: the channel
array is float32, so every array operation is a float32 operation whose
Python-float operand is first rounded to float32 (NumPy's rule for a Python
scalar with a float32 array), while 1/max_freq**2 and the time unit are
Python (float64) scalars; the last channel's shift is set to 0. NumPy is
not needed: each float32 operation is done in float64 and rounded to
float32 once, which gives the float32 result exactly for + - * / (a double
has more than 2*24+2 significand bits). The script also checks the script's
own assertion, max_shift > (dm_first + nr_dms * dm_step) * shifts[0]."""
import os
import struct
import sys

nr_dms = 2048
nr_samples = 25000
nr_channels = 1536
max_shift = 650
down_sampling = 1
dm_first = 0.0
dm_step = 0.02
channel_bandwidth = 0.1953125
sampling_time = 0.00004096
min_freq = 1425.0


def f32(x):
    """x rounded to the nearest float32 (ties to even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def get_shifts():
    max_freq = min_freq + ((nr_channels - 1) * channel_bandwidth)   # Python float
    inverse_high_freq = 1 / max_freq**2                                # Python float
    time_unit = nr_samples * sampling_time                             # Python float
    shifts = []
    for channel in range(nr_channels):
        c = f32(float(channel))                                        # np.arange(..., float32)
        freq = f32(f32(min_freq) + f32(c * f32(channel_bandwidth)))    # min_freq + channels * bw
        inverse_freq = f32(1.0 / f32(freq * freq))                     # 1.0 / (...) ** 2
        d = f32(inverse_freq - f32(inverse_high_freq))
        s = f32(f32(4148.808) * d)
        s = f32(s * f32(nr_samples / down_sampling))
        s = f32(s / f32(time_unit))
        shifts.append(s)
    shifts[-1] = 0.0
    return shifts


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "dedispersion_shifts.f32")
    shifts = get_shifts()
    # dedispersion_milo.py: assert max_shift > (dm_first + nr_dms * dm_step) * shifts[0]
    if not max_shift > (dm_first + nr_dms * dm_step) * shifts[0]:
        sys.exit("make_shifts.py: the shifts exceed max_shift")
    data = struct.pack("<%df" % nr_channels, *shifts)
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
