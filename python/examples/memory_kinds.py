"""Memory the host and the GPU share: mapped (pinned host memory the GPU reads and writes in
place), managed (unified memory), and `cuda.mapped(...)` around an existing NumPy array. No copy
is made: after `cuda.synchronize()` the host reads what the kernel wrote, in the same array.

Fixed: a count of positive values into a mapped counter (atomic), a clamp of managed memory in
place, a scale of a NumPy array mapped for one launch.
Broken: the count with `counter[0] += 1`, a read-modify-write every thread does at once (a race).
"""

import numpy as np

from racetrack import cuda

THREADS = 128


@cuda.jit
def count_positive(x, counter):
    i = cuda.grid(1)
    if i < x.size and x[i] > 0:
        cuda.atomic.add(counter, 0, 1)


@cuda.jit
def count_positive_racy(x, counter):
    i = cuda.grid(1)
    if i < x.size and x[i] > 0:
        counter[0] += 1  # BUG: a read-modify-write of one counter by every thread at once


@cuda.jit
def clamp_in_place(values, low, high):
    i = cuda.grid(1)
    if i < values.size:
        values[i] = min(max(values[i], low), high)


@cuda.jit
def scale_in_place(values, factor):
    i = cuda.grid(1)
    if i < values.size:
        values[i] *= factor


def blocks_for(n):
    return max(1, (n + THREADS - 1) // THREADS)


def count_positive_mapped(x, kernel=count_positive):
    """The count lands in mapped memory: the host reads it after synchronizing, with no copy."""
    counter = cuda.mapped_array(1, np.int32)
    counter[0] = 0
    kernel[blocks_for(x.size), THREADS](cuda.to_device(x), counter)
    cuda.synchronize()
    return int(counter[0])


def clamp_managed(values, low, high):
    """The values live in managed memory: written by the host, clamped by the GPU, read back by
    the host, one array throughout."""
    managed = cuda.managed_array(values.shape, values.dtype)
    managed[...] = values
    clamp_in_place[blocks_for(values.size), THREADS](managed, values.dtype.type(low), values.dtype.type(high))
    cuda.synchronize()
    return np.array(managed)


def scale_mapped(values, factor):
    """Scales ``values`` (a NumPy array) in place through a mapping of its own memory."""
    with cuda.mapped(values) as on_device:
        scale_in_place[blocks_for(values.size), THREADS](on_device, values.dtype.type(factor))
        cuda.synchronize()
    return values


if __name__ == "__main__":
    import racetrack

    x = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    print("positive values:", count_positive_mapped(x), "(NumPy:", int((x > 0).sum()), ")")
    print("clamped:", clamp_managed(np.arange(-4, 5, dtype=np.float32), -2, 2))
    print("scaled in place:", scale_mapped(np.arange(5, dtype=np.float64), 3.0))
    with racetrack.checking(raise_on_finding=False) as report:
        count_positive_mapped(x, count_positive_racy)
    print(report)
