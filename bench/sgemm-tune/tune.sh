#!/usr/bin/env bash
# The tile sweep behind kernels/ch7_matmul/12_tuned_tiles.cu: builds that kernel with nvcc for
# each shape below (its #defines rewritten), then times each against cublasSgemm at 4096².
# Needs a GPU machine with the CUDA toolkit (nvcc, cuBLAS); not part of CI.
#
#   bash bench/sgemm-tune/tune.sh [SIDE …]        # from anywhere; default 4096
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernel=$here/../../kernels/ch7_matmul/12_tuned_tiles.cu
work=$(mktemp -d)
sides=("${@:-4096}")
shapes=()
# BM BN BK WM WN THREADS: a block's tile of C, its step along K, a warp's tile, the block's threads
for shape in \
    "128 128 8 64 32 256" "128 128 8 64 64 128" "128 128 16 64 64 128" "128 128 8 32 64 256" \
    "128 128 16 64 32 256" "128 256 8 64 64 256" "256 128 8 64 64 256" "128 256 8 64 32 512"; do
    read -r bm bn bk wm wn threads <<<"$shape"
    # the kernel's own rules: whole warps over the tile, whole float4s of each tile per thread
    if (( (bm / wm) * (bn / wn) * 32 != threads || bm * bk / 4 % threads != 0 || bk * bn / 4 % threads != 0 )); then
        echo "skipping $shape: the kernel cannot run it"
        continue
    fi
    name="${bm}x${bn}_k${bk}_w${wm}x${wn}_t${threads}"
    sed -e "s/^#define BM .*/#define BM $bm/" -e "s/^#define BN .*/#define BN $bn/" \
        -e "s/^#define BK .*/#define BK $bk/" -e "s/^#define WM .*/#define WM $wm/" \
        -e "s/^#define WN .*/#define WN $wn/" -e "s/^#define THREADS .*/#define THREADS $threads/" \
        "$kernel" >"$work/$name.cu"
    nvcc -O3 -arch=sm_90 -std=c++17 -Xptxas -v -DKERNEL_FILE="\"$work/$name.cu\"" \
        -DENTRY=matmul_tuned_tiles -DTILE_M="$bm" -DTILE_N="$bn" -DBLOCK_THREADS="$threads" \
        "$here/sgemm_tune.cu" -lcublas -o "$work/$name" >"$work/$name.log" 2>&1 &
    shapes+=("$name")
done
wait || true
for name in "${shapes[@]}"; do
    registers=$(grep -o "Used [0-9]* registers" "$work/$name.log" | head -1 || true)
    if [[ -x $work/$name ]]; then
        "$work/$name" "$name ($registers)" "${sides[@]}"
    else
        echo "$name: nvcc failed"
        grep -m3 error "$work/$name.log" || true
    fi
done
rm -rf "$work"
