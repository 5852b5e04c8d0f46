#!/usr/bin/env bash
# The emulator against native C (one core, -O2) and Oclgrind (--data-races, one thread and every
# core) on reduce_better (262,144 / 256 and 4,194,304 / 2,560 blocks of 1024) and a grid-stride
# saxpy (64 Mi floats, 2,560 blocks of 256): the table in emu/BENCHMARK.md, "Every core".
# Needs a C compiler, and oclgrind (Debian: apt-get install oclgrind) unless SKIP_OCLGRIND=1.
# Run from the workspace root: bash emu/bench/compare.sh
set -euo pipefail
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench=emu/bench

cc -O2 -o "$work/reduce_better" "$bench/reduce_better.c"
cc -O2 -o "$work/saxpy_grid_stride" "$bench/saxpy_grid_stride.c"
cargo build -q --release -p ptx-emu --example throughput --example saxpy

echo "## native C, one core (best of 5)"
"$work/reduce_better" 262144 256
"$work/reduce_better" 4194304 2560
"$work/saxpy_grid_stride" 67108864 2560

for threads in 1 "$cores"; do
    echo "## emulator, RACETRACK_THREADS=$threads"
    for shape in "262144 256" "4194304 2560"; do
        for checkers in off racecheck; do
            # shellcheck disable=SC2086
            RACETRACK_THREADS=$threads target/release/examples/throughput $shape $checkers | tail -1
        done
    done
    RACETRACK_THREADS=$threads target/release/examples/saxpy 67108864 2560 | tail -2
done

if [ "${SKIP_OCLGRIND:-0}" = 1 ]; then
    exit 0
fi
# Oclgrind's simulator files: kernel source, name, global and local size, then the arguments.
reduce_sim() { # N GRID
    printf '%s\nreduce_better\n%d 1 1\n1024 1 1\n<size=%d float fill=1>\n<size=4 uint>\n%d\n<size=%d float fill=0>\n' \
        "$PWD/$bench/reduce_better.cl" $(($2 * 1024)) $(($1 * 4)) "$1" $(($2 * 4)) > "$work/reduce_$1.sim"
}
reduce_sim 262144 256
reduce_sim 4194304 2560
printf '%s\nsaxpy_grid_stride\n%d 1 1\n256 1 1\n<size=4 float>\n2.5\n<size=%d float fill=1>\n<size=%d float fill=2>\n<size=4 uint>\n%d\n' \
    "$PWD/$bench/saxpy_grid_stride.cl" $((2560 * 256)) $((67108864 * 4)) $((67108864 * 4)) 67108864 > "$work/saxpy.sim"
for threads in 1 "$cores"; do
    echo "## Oclgrind --data-races, --num-threads $threads (wall seconds, including its ~0.05 s start)"
    for sim in reduce_262144 reduce_4194304 saxpy; do
        # Its race detector's memory grows with the data: saxpy's 512 MiB took it past 24 GiB.
        /usr/bin/time -f "$sim: %e s, %M KiB resident" oclgrind-kernel --data-races \
            --num-threads "$threads" "$work/$sim.sim" 2>&1 | tail -2 || true
    done
done
