"""Structured (record) arrays: kernels over a NumPy array of structs, reading and writing their
fields by name, with one record passed by value as a kernel argument.

Particles move along a line between 0 and a wall, bouncing off it; each counts its bounces.
Fixed: `advance` moves every particle one step (the step's length and the wall come as one
record), `total_bounces` sums the counts with an atomic add.
Broken: `total_bounces_into_record` sums into a field of a record argument with `+=`: every
thread reads and writes the same field at once (a race).
"""

import numpy as np

from racetrack import cuda

THREADS = 128

PARTICLE = np.dtype([("x", np.int32), ("v", np.int32), ("bounces", np.int32)])
STEP = np.dtype([("dt", np.int32), ("wall", np.int32)])
TALLY = np.dtype([("particles", np.int32), ("bounces", np.int32)])


@cuda.jit
def advance(particles, step):
    i = cuda.grid(1)
    if i < particles.size:
        p = particles[i]  # a reference: writes to p's fields change the array
        x = p.x + p.v * step.dt
        if x > step.wall:
            x = step.wall - (x - step.wall)
            p.v = -p.v
            p.bounces += 1
        elif x < 0:
            x = -x
            p.v = -p.v
            p.bounces += 1
        p.x = x


@cuda.jit
def total_bounces(particles, total):
    i = cuda.grid(1)
    if i < particles.size:
        cuda.atomic.add(total, 0, particles[i].bounces)


@cuda.jit
def total_bounces_into_record(particles, tally):
    i = cuda.grid(1)
    if i < particles.size:
        tally.bounces += particles[i].bounces  # BUG: every thread adds to the one field, no atomic


def blocks_for(n):
    return max(1, (n + THREADS - 1) // THREADS)


def make_step(dt, wall):
    return np.array([(dt, wall)], STEP)[0]


def simulate(particles, dt, wall, steps):
    """``steps`` steps of ``advance``; returns the particles (a new array)."""
    moved = cuda.to_device(particles)
    step = make_step(dt, wall)
    for _ in range(steps):
        advance[blocks_for(particles.size), THREADS](moved, step)
    return moved.copy_to_host()


def simulate_numpy(particles, dt, wall, steps):
    moved = particles.copy()
    for _ in range(steps):
        x = moved["x"] + moved["v"] * dt
        above, below = x > wall, x < 0
        x = np.where(above, wall - (x - wall), np.where(below, -x, x))
        bounced = above | below
        moved["v"] = np.where(bounced, -moved["v"], moved["v"])
        moved["bounces"] += bounced
        moved["x"] = x
    return moved


def count_bounces(particles):
    total = np.zeros(1, np.int32)
    total_bounces[blocks_for(particles.size), THREADS](particles, total)
    return int(total[0])


def count_bounces_into_record(particles):
    tally = np.zeros(1, TALLY)
    total_bounces_into_record[blocks_for(particles.size), THREADS](particles, tally[0])
    return int(tally[0]["bounces"])


def random_particles(n, wall, seed=0):
    rng = np.random.default_rng(seed)
    particles = np.zeros(n, PARTICLE)
    particles["x"] = rng.integers(0, wall + 1, n)
    particles["v"] = rng.integers(-5, 6, n)
    return particles


if __name__ == "__main__":
    import racetrack

    start = random_particles(1000, wall=100)
    moved = simulate(start, dt=1, wall=100, steps=50)
    print("matches NumPy:", np.array_equal(moved, simulate_numpy(start, 1, 100, 50)))
    print("bounces:", count_bounces(moved), "(NumPy:", int(moved["bounces"].sum()), ")")
    with racetrack.checking(raise_on_finding=False) as report:
        count_bounces_into_record(moved)
    print(report)
