#!/usr/bin/env bash
# device_check.sh: on a machine with nvcc and an NVIDIA GPU, build the
# fatbins into $1 (build.sh), show what they hold, report ptxas register and
# shared-memory use for sm_90, and run selftest.cu against the built fatbins
# (once loading the sm_90 SASS, once forcing the driver to JIT the
# compute_90 PTX). Writes into $1: the fatbins, SOURCES.sha256,
# ptxas_sm90.txt and selftest.txt.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kdir="$(cd "$here/.." && pwd)"
out="${1:?usage: device_check.sh OUTDIR}"
export PATH="/usr/local/cuda/bin:$PATH"

echo "== nvcc"; nvcc --version | tail -n 2
echo "real archs: $(nvcc --list-gpu-code | tr '\n' ' ')"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true

echo "== build"; bash "$kdir/build.sh" "$out"
ls -la "$out"; cat "$out/SOURCES.sha256"

echo "== contents"
for f in "$out"/*.fatbin; do
  echo "-- $(basename "$f")"
  cuobjdump --list-elf "$f"; cuobjdump --list-ptx "$f"
  echo "names found as bytes: $(grep -aoE '(matmul|dot)_[a-z0-9]+_(f32|f64|i32)' "$f" | sort -u | tr '\n' ' ')"
done

echo "== ptxas -v, sm_90"
: >"$out/ptxas_sm90.txt"
for src in "$kdir"/*.cu; do
  nvcc -cubin -O3 -std=c++17 -arch=sm_90 -Xptxas -v -o /tmp/k.cubin "$src" >>"$out/ptxas_sm90.txt" 2>&1
done
awk -F"'" '/Compiling entry function/ {fn=$2}
     /Used [0-9]+ registers/ {sub(/.*Used/, "Used"); printf "%-20s %s\n", fn, $0}
     /spill/ && !/0 bytes spill stores, 0 bytes spill loads/ {print fn, "SPILL:", $0}' "$out/ptxas_sm90.txt"

echo "== selftest"
nvcc -O2 -std=c++17 -o /tmp/selftest "$here/selftest.cu" -lcuda
rc=0
{ echo "### SASS"; /tmp/selftest "$out"; } >"$out/selftest.txt" 2>&1 || rc=1
{ echo "### CUDA_FORCE_PTX_JIT=1"; CUDA_FORCE_PTX_JIT=1 /tmp/selftest "$out"; } >>"$out/selftest.txt" 2>&1 || rc=1
grep -E '^(device|func|FAIL|selftest|###)|:[0-9]+: ' "$out/selftest.txt" | head -n 80
exit $rc
