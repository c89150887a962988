#!/usr/bin/env bash
# gpu-check.sh: goamp's GPU tests, built on a machine with Go (no CUDA needed)
# and run on a machine with an NVIDIA GPU and driver (no Go needed).
#
#   scripts/gpu-check.sh build      # here: CGO_ENABLED=0 test binaries and goamp into .device/bin
#   scripts/gpu-check.sh run [OUT]  # there, from the repository root: runs them, summary on stdout
#                                   # (GPU_CHECK_SANITIZER=0 leaves out compute-sanitizer, the longest part;
#                                   #  GPU_CHECK_SANITIZER=only runs it alone, for a second call,
#                                   #  GPU_CHECK_SANITIZER_GROUPS="gemm-dmma go" some of its groups;
#                                   #  GPU_CHECK_SM80=1 adds the sm_80 run below, =only runs it alone)
#
# "run" runs the test binaries of the packages that touch the GPU (the
# conformance suite walks every registered kernel on every accelerator, the
# GPU's included), then the CLI as a user would: NumPy matrices of odd shapes
# in all three types through every GPU kernel, compared with NumPy's own
# product; dot products; and compute-sanitizer's memcheck and racecheck over
# the kernels' tests when the CUDA toolkit is there. Logs go to OUT (default
# .device/out).
#
# The sm_80 run (GPU_CHECK_SM80) builds the kernels as compute_80 PTX alone
# (nvcc needed there) and runs the GEMM conformance tests on them through
# GOAMP_KERNEL_IMAGES (kernels.ImagesEnv): the driver compiles that PTX for
# the GPU at hand with __CUDA_ARCH__ = 800, so a Hopper GPU runs the code
# an Ampere GPU would (the Hopper-only wgmma is left out).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.device/bin
packages=(./amp ./linalg ./internal/cuda ./internal/gpu ./internal/gpu/kernels ./internal/gpubench ./internal/kernel/kerneltest ./internal/walkthrough ./examples/transpose)

build() {
  mkdir -p "$bin"
  for p in "${packages[@]}"; do
    CGO_ENABLED=0 go test -c -ldflags='-s -w' -o "$bin/$(basename "$p").test" "$p"
  done
  CGO_ENABLED=0 go build -ldflags='-s -w' -o "$bin/goamp" ./cmd/goamp
  ls -la "$bin"
}

# sm80 builds compute_80 images into a folder of its own and runs the GEMM
# tests on them; $1 is the logs' folder.
sm80() {
  local out=$1 nvcc images f=0
  nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
  if [ -z "$nvcc" ]; then
    echo "SKIP: sm_80 run: no nvcc"
    return 0
  fi
  echo "== the kernels' sm_80 code (compute_80 PTX, compiled by the driver)"
  # The sm_90a-only images (wgmma, dmma's TMA-fed kernels) are not rebuilt
  # here, and the embedded ones would take dmma's aligned products from
  # the code this run is for.
  local -x GOAMP_DMMA_NO_TMA=1 GOAMP_REG128_NO_TMA=1
  images=$(mktemp -d)
  for src in internal/gpu/kernels/*.cu; do
    grep -q '^// build.sh: sm_90a only' "$src" && continue
    "$nvcc" -fatbin -O3 -std=c++17 -gencode arch=compute_80,code=compute_80 \
      -o "$images/$(basename "${src%.cu}").fatbin" "$src" >>"$out/sm80-build.log" 2>&1 &
  done
  wait
  echo "built: $(cd "$images" && ls | tr '\n' ' ')"
  # The images in that folder are the ones loaded: a broken one fails.
  mkdir -p "$images/broken" && echo broken >"$images/broken/matmul_dmma.fatbin"
  if GOAMP_KERNEL_IMAGES="$images/broken" "$bin/goamp" matmul --device cuda --kernel dmma --type float64 --m 64 --n 64 --k 64 >"$out/sm80-broken.txt" 2>&1; then
    echo "sm_80: a broken image in GOAMP_KERNEL_IMAGES was not loaded"; f=1
  else
    echo "sm_80: a broken image is refused: $(tail -1 "$out/sm80-broken.txt")"
  fi
  if (cd linalg && GOAMP_KERNEL_IMAGES="$images" "../$bin/linalg.test" -test.v -test.count=1 -test.run 'MatMulConformance/cuda:0/^(reg128|dmma|mma)$' >"$out/sm80-linalg.log" 2>&1); then
    echo "sm_80 linalg conformance: ok, pass $(grep -c -- '--- PASS' "$out/sm80-linalg.log")"
  else
    echo "sm_80 linalg conformance: FAIL"; grep -- '--- FAIL' "$out/sm80-linalg.log" | head -5; f=1
  fi
  if (cd internal/gpu && GOAMP_KERNEL_IMAGES="$images" "$OLDPWD/$bin/gpu.test" -test.v -test.count=1 -test.run 'GemmOnDevice$' >"$out/sm80-gpu.log" 2>&1); then
    echo "sm_80 TestGemmOnDevice: ok"
  else
    echo "sm_80 TestGemmOnDevice: FAIL"; grep -- '--- FAIL\|gemm_test' "$out/sm80-gpu.log" | head -5; f=1
  fi
  rm -rf "$images"
  return $f
}

run() {
  # Logs go to a folder of their own, packed into OUT/logs.tgz at the end.
  dest=${1:-.device/out}
  mkdir -p "$dest"
  dest=$(cd "$dest" && pwd)
  out=$(mktemp -d)/logs
  mkdir -p "$out"
  trap 'tar czf "$dest/logs.tgz" -C "$(dirname "$out")" logs' EXIT
  fail=0
  echo "== goamp devices"
  "$bin/goamp" devices | tee "$out/devices.txt"

  if [ "${GPU_CHECK_SM80:-0}" = only ]; then
    sm80 "$out" || fail=1
    return $fail
  fi

  if [ "${GPU_CHECK_SANITIZER:-1}" != only ]; then
    echo "== test binaries"
    for p in "${packages[@]}"; do
      t="$PWD/$bin/$(basename "$p").test"
      log="$out/$(basename "$p").log"
      # A test binary runs in its package's folder, as go test runs it.
      if (cd "$p" && "$t" -test.v -test.count=1 >"$log" 2>&1); then
        status=ok
      else
        status=FAIL; fail=1
      fi
      printf '%-28s %-4s pass %3d  fail %3d  skip %3d\n' "$p" "$status" \
        "$(grep -c -- '--- PASS' "$log" || true)" "$(grep -c -- '--- FAIL' "$log" || true)" "$(grep -c -- '--- SKIP' "$log" || true)"
      grep -- '--- FAIL' "$log" | head -5 || true
    done

    echo "== NumPy matrices through every GPU kernel"
    if python3 -c 'import numpy' 2>/dev/null; then
      python3 scripts/gpu_numpy_check.py "$bin/goamp" "$out" || fail=1
    else
      echo "SKIP: no NumPy on this machine"
  fi

  echo "== dot products"
  for k in tiled warp go-tiled auto; do
    for ty in float32 float64 int32; do
      "$bin/goamp" dot --device cuda --kernel "$k" --type "$ty" --n 1000003 --check --repeat 3 >"$out/dot-$k-$ty.txt" 2>&1 \
        && echo "dot $k $ty: $(grep -E '^(check|kernel)' "$out/dot-$k-$ty.txt" | tr '\n' ' ')" \
        || { echo "dot $k $ty: FAIL"; cat "$out/dot-$k-$ty.txt"; fail=1; }
    done
  done

  echo "== a missing device is a one-line error"
  "$bin/goamp" matmul --device cuda:7 >"$out/nodev.txt" 2>&1 && fail=1 || echo "cuda:7: exit $?: $(tail -1 "$out/nodev.txt")"
  fi

  if [ "${GPU_CHECK_SM80:-0}" = 1 ]; then
    sm80 "$out" || fail=1
  fi

  san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
  if [ "${GPU_CHECK_SANITIZER:-1}" = 0 ]; then
    echo "SKIP: compute-sanitizer (GPU_CHECK_SANITIZER=0)"
  elif [ -n "$san" ]; then
    echo "== compute-sanitizer over the GPU kernels' conformance tests"
    # Each group is one run of the tool: GPU_CHECK_SANITIZER_GROUPS picks
    # some (a call on a machine lent by the minute may not hold them all).
    groups=${GPU_CHECK_SANITIZER_GROUPS:-conformance gemm-reg128 gemm-dmma gemm-mma gemm-wgmma queue go}
    for tool in memcheck racecheck; do
      for group in $groups; do
        dir=linalg test=linalg.test pattern= env=()
        case $group in
          conformance) pattern='Conformance/cuda' ;;
          # The GEMM kernels where linalg does not reach: transposes,
          # batches, products split along K; a kernel a run.
          gemm-reg128) dir=internal/gpu test=gpu.test pattern='GemmOnDevice/matmul_reg128' ;;
          gemm-dmma) dir=internal/gpu test=gpu.test pattern='GemmOnDevice/matmul_dmma' ;;
          gemm-mma) dir=internal/gpu test=gpu.test pattern='GemmOnDevice/matmul_mma' ;;
          gemm-wgmma) dir=internal/gpu test=gpu.test pattern='GemmWGMMAOnDevice|DotOnePassOnDevice' ;;
          # Work queued on views and products that overlap their copies
          # with their kernels (row copies, several streams). The
          # sanitizer instruments a kernel at its first launch, which
          # waits for the device, so the tests' timing checks are off
          # here. memcheck only: these add no kernel of their own.
          queue) [ "$tool" = memcheck ] || continue
                 pattern='Queued|Overlapped' env=(GOAMP_SANITIZER=1) ;;
          # The Go kernels compiled to PTX; the deliberate faults are left
          # out (a reported out-of-bounds access is still an access the
          # kernel skipped, but the tests that provoke them are about the
          # report).
          go) dir=internal/kernel/kerneltest test=kerneltest.test pattern='Scale|Transpose|Math|Integers|Reduce|Atomics|WarpShuffles' ;;
          *) echo "unknown sanitizer group $group (conformance gemm-reg128 gemm-dmma gemm-mma gemm-wgmma queue go)"; fail=1; continue ;;
        esac
        log="$out/sanitizer-$group-$tool.log"
        if (cd "$dir" && env "${env[@]}" "$san" --tool "$tool" --error-exitcode 9 "$OLDPWD/$bin/$test" -test.v -test.run "$pattern" >"$log" 2>&1); then
          echo "$tool ($group): clean ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)), tests passed: $(grep -c -- '--- PASS' "$log" || true)"
        else
          echo "$tool ($group): FAILED"; tail -20 "$log"; fail=1
        fi
      done
    done
  else
    echo "SKIP: compute-sanitizer not found"
  fi
  return $fail
}

case "${1:-}" in
  build) build ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 build | run [OUT]" >&2; exit 2 ;;
esac
