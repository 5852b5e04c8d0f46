"""Chapter 8, many GPUs: a sum split over devices, peer access, and a ring all-reduce by hand.

Fixed: each device sums its slice into block sums, then device 0 gathers them (by copies, or by
reading them in place through peer access); a ring all-reduce whose reduce-scatter and
all-gather steps each wait for the previous device's event.
Broken: the all-gather step queued without waiting for the previous device's event (a race
across devices: a device copies a chunk its predecessor has not finished); chunks of n // ranks
values (when ranks does not divide n the last values are never summed: wrong result); device 0
reading another device's memory without peer access (a memory finding at the read).

Every device is `cuda.gpus[rank]`; the emulator holds RACETRACK_DEVICES of them (2 unless set).
"""

import math

import numpy as np
from numba import float32

from racetrack import cuda

THREADS = 128  # the reduction kernels' block: a power of two, one shared float per thread


# ---- a sum split over devices ----


@cuda.jit(device=True)
def block_total(value):
    """Every thread's `value` added up by a tree in shared memory; thread 0 gets the block's total."""
    cache = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    cache[tid] = value
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            cache[tid] += cache[tid + step]
        cuda.syncthreads()
        step //= 2
    return cache[0]


@cuda.jit
def block_sums(part, sums):
    """One float per block: the block's grid-stride share of `part`, summed by a tree."""
    total = float32(0.0)
    for j in range(cuda.grid(1), part.shape[0], cuda.gridsize(1)):
        total += part[j]
    total = block_total(total)
    if cuda.threadIdx.x == 0:
        sums[cuda.blockIdx.x] = total


@cuda.jit
def add_block_sums(sums, total):
    """One block adds `sums` (this device's gathered sums, or a peer's read in place) into total[0]."""
    acc = float32(0.0)
    for j in range(cuda.threadIdx.x, sums.shape[0], THREADS):
        acc += sums[j]  # a peer's memory when `sums` is on another device: needs peer access
    acc = block_total(acc)
    if cuda.threadIdx.x == 0:
        total[0] += acc


def _slices(x, devices):
    bounds = [len(x) * d // devices for d in range(devices + 1)]
    return [x[bounds[d] : bounds[d + 1]] for d in range(devices)]


def _block_sums_everywhere(x, blocks):
    """Every device sums its slice of `x` into `blocks` floats; their device arrays by device."""
    sums = []
    for rank, part in enumerate(_slices(x, len(cuda.gpus))):
        with cuda.gpus[rank]:
            d_sums = cuda.to_device(np.zeros(blocks, np.float32))
            if len(part):
                block_sums[blocks, THREADS](cuda.to_device(part), d_sums)
            sums.append(d_sums)
    return sums


def sum_by_copies(x, blocks=4):
    """Block sums on every device, copied to device 0 (a copy needs no peer access), summed there."""
    sums = _block_sums_everywhere(x, blocks)
    with cuda.gpus[0]:
        gathered = cuda.device_array(blocks * len(sums), np.float32)
        for rank, d_sums in enumerate(sums):
            gathered[rank * blocks : (rank + 1) * blocks].copy_to_device(d_sums)
        total = cuda.to_device(np.zeros(1, np.float32))
        add_block_sums[1, THREADS](gathered, total)
        return float(total.copy_to_host()[0])


_peer_access = set()


def enable_peer_access(reader, owner):
    """Lets kernels on device `reader` read `owner`'s memory, once per pair (CUDA refuses a second
    time). Numba's way: the reader's context enables the owner's context by its handle."""
    if reader == owner or (reader, owner) in _peer_access:
        return
    with cuda.gpus[reader]:
        context = cuda.current_context()
        if not context.can_access_peer(owner):
            raise RuntimeError(f"device {reader} cannot access device {owner}'s memory")
        context.enable_peer_access(cuda.gpus[owner].get_primary_context().handle)
    _peer_access.add((reader, owner))


def sum_over_peers(x, blocks=4, with_peer_access=True):
    """Block sums on every device; device 0 reads each device's sums where they are."""
    sums = _block_sums_everywhere(x, blocks)
    with cuda.gpus[0]:
        total = cuda.to_device(np.zeros(1, np.float32))
        for rank, d_sums in enumerate(sums):
            if with_peer_access:
                enable_peer_access(0, rank)
            add_block_sums[1, THREADS](d_sums, total)
        return float(total.copy_to_host()[0])


def split_sum_error_bound(x, blocks):
    """γ_h·Σ|x| for the deepest chain of float32 additions any value goes through: its
    grid-stride loop, the block's tree, the gathering loop and tree, then one addition per device."""
    devices = len(cuda.gpus)
    longest_slice = -(-len(x) // devices)
    depth = (
        -(-longest_slice // (blocks * THREADS))
        + int(math.log2(THREADS))
        + -(-(blocks * devices) // THREADS)
        + int(math.log2(THREADS))
        + devices
    )
    u = np.finfo(np.float32).eps / 2
    return depth * u / (1 - depth * u) * float(np.abs(x.astype(np.float64)).sum())


# ---- a ring all-reduce: chunk c of n values is [c·n/ranks, (c+1)·n/ranks) ----


@cuda.jit
def ring_reduce_step(mine, previous, chunk, ranks):
    """Reduce-scatter step: add the previous device's copy of one chunk into ours (a peer read)."""
    n = mine.shape[0]
    begin = n * chunk // ranks
    end = n * (chunk + 1) // ranks
    for j in range(begin + cuda.grid(1), end, cuda.gridsize(1)):
        mine[j] += previous[j]


@cuda.jit
def ring_gather_step(mine, previous, chunk, ranks):
    """All-gather step: copy the previous device's finished chunk into ours."""
    n = mine.shape[0]
    begin = n * chunk // ranks
    end = n * (chunk + 1) // ranks
    for j in range(begin + cuda.grid(1), end, cuda.gridsize(1)):
        mine[j] = previous[j]


@cuda.jit
def ring_gather_without_wait(mine, previous, chunk, ranks):
    """ring_gather_step, queued by a host that forgot to wait for the previous device's event."""
    n = mine.shape[0]
    begin = n * chunk // ranks
    end = n * (chunk + 1) // ranks
    for j in range(begin + cuda.grid(1), end, cuda.gridsize(1)):
        mine[j] = previous[j]  # BUG: nothing ordered this copy after the previous device's last step


@cuda.jit
def ring_reduce_wrong_offset(mine, previous, chunk, ranks):
    """ring_reduce_step with chunks of n // ranks values."""
    per_chunk = mine.shape[0] // ranks
    begin = chunk * per_chunk
    end = begin + per_chunk  # BUG: the last chunk stops n % ranks values short
    for j in range(begin + cuda.grid(1), end, cuda.gridsize(1)):
        mine[j] += previous[j]


def reduce_chunk(rank, step, ranks):
    """The chunk `rank` adds into at reduce-scatter step `step`: its predecessor finished it a step ago."""
    return (rank + 2 * ranks - step - 1) % ranks


def gather_chunk(rank, step, ranks):
    """The chunk `rank` copies at all-gather step `step`: the one its predecessor holds finished."""
    return (rank + ranks - step) % ranks


def all_reduce(inputs, blocks=2, threads=64, reduce_step=ring_reduce_step, gather_step=ring_gather_step,
               gather_waits=True):
    """Every device r starts with inputs[r] and ends with their elementwise sum. One stream per
    device; each step waits for the event its predecessor recorded after its own last step
    (`gather_waits=False`: not in the all-gather half, the broken host)."""
    ranks = len(inputs)
    data, streams = [], []
    for rank in range(ranks):
        enable_peer_access(rank, (rank - 1) % ranks)  # each step reads the predecessor's memory
        with cuda.gpus[rank]:
            data.append(cuda.to_device(np.asarray(inputs[rank], np.float32)))
            streams.append(cuda.stream())
    # ANCHOR: ring
    # done[r]: the event device r recorded after its last step, which its successor waits for.
    done = [None] * ranks

    def phase(step_kernel, chunk_of, wait):
        for step in range(ranks - 1):
            finished = []
            for rank in range(ranks):
                previous = (rank - 1) % ranks
                with cuda.gpus[rank]:
                    if wait and done[previous] is not None:
                        done[previous].wait(streams[rank])
                    chunk = chunk_of(rank, step, ranks)
                    step_kernel[blocks, threads, streams[rank]](data[rank], data[previous], chunk, ranks)
                    event = cuda.event(timing=False)
                    event.record(streams[rank])
                    finished.append(event)
            done[:] = finished

    phase(reduce_step, reduce_chunk, True)
    phase(gather_step, gather_chunk, gather_waits)
    # ANCHOR_END: ring
    outputs = []
    for rank in range(ranks):
        with cuda.gpus[rank]:
            cuda.synchronize()
            outputs.append(data[rank].copy_to_host())
    return outputs


def all_reduce_error_bound(inputs):
    """γ_{N−1}·Σ|x| per value: the ring adds a value's N inputs one after another."""
    stacked = np.asarray(inputs, np.float64)
    k = len(inputs) - 1
    u = np.finfo(np.float32).eps / 2
    return k * u / (1 - k * u) * np.abs(stacked).sum(axis=0)


if __name__ == "__main__":
    cuda.detect()
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, 10_000).astype(np.float32)
    exact = float(x.astype(np.float64).sum())
    print(f"sum by copies:  {sum_by_copies(x):.5f}   (float64: {exact:.5f})")
    print(f"sum over peers: {sum_over_peers(x):.5f}")
    inputs = [rng.uniform(-1, 1, 1001).astype(np.float32) for _ in cuda.gpus]
    outputs = all_reduce(inputs)
    want = np.sum(np.asarray(inputs, np.float64), axis=0)
    print("ring all-reduce within its bound on every device:",
          all(np.all(np.abs(out - want) <= all_reduce_error_bound(inputs)) for out in outputs))
