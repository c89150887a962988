#!/usr/bin/env bash
# build.sh: compile every CUDA C kernel in this folder (*.cu) into a fatbin
# that the kernels package embeds with go:embed, and record the sources'
# sha256 in SOURCES.sha256, the headers they include (*.cuh) with them
# (kernels_test.go fails when a .cu or .cuh changes without being rebuilt).
#
# Usage: internal/gpu/kernels/build.sh [OUTDIR]
#   OUTDIR defaults to this script's folder. Needs nvcc (CUDA 13.0:
#   /usr/local/cuda/bin/nvcc, or $NVCC, or nvcc on PATH); no GPU is needed.
#   On a machine without nvcc, copy the tree to one that has it, run this
#   there, and copy the *.fatbin files and SOURCES.sha256 back.
#
# Each <name>.cu becomes <name>.fatbin holding SASS for sm_80 (A100) and
# sm_90 (H100/H200) and PTX for compute_90, which the driver JIT-compiles for
# newer GPUs; a .cu with the line "// build.sh: sm_90a only" (Hopper's
# wgmma kernels) holds SASS for sm_90a and nothing else. Fatbin
# compression is off, so that the kernels' names are
# plain bytes in the file (kernels_test.go looks for them).
set -euo pipefail
export LC_ALL=C # byte order for the glob below, plain messages from tools

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here}"

nvcc="${NVCC:-}"
if [ -z "$nvcc" ]; then
  if command -v nvcc >/dev/null 2>&1; then
    nvcc="$(command -v nvcc)"
  elif [ -x /usr/local/cuda/bin/nvcc ]; then
    nvcc=/usr/local/cuda/bin/nvcc
  fi
fi
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  echo "build.sh: FATAL: nvcc not found (looked at \$NVCC, PATH and /usr/local/cuda/bin/nvcc)." >&2
  echo "build.sh: run this script on a machine with the CUDA toolkit (13.0) installed." >&2
  exit 1
fi

# The real architectures we ship SASS for, and the virtual one we ship PTX for.
sass_archs=(80 90)
ptx_arch=90
supported="$("$nvcc" --list-gpu-code)"
for a in "${sass_archs[@]}"; do
  if ! grep -qx "sm_$a" <<<"$supported"; then
    echo "build.sh: FATAL: $nvcc cannot generate code for sm_$a; it supports:" >&2
    echo "$supported" | tr '\n' ' ' >&2; echo >&2
    exit 1
  fi
done
gencode=()
for a in "${sass_archs[@]}"; do
  gencode+=(-gencode "arch=compute_$a,code=sm_$a")
done
gencode+=(-gencode "arch=compute_$ptx_arch,code=compute_$ptx_arch")

# No compression: --compress-mode=none where this nvcc lists 'none' for it,
# else --no-compress (CUDA 12.4+; what nvcc 13.0 got here), else fatbinary's
# own switch.
help="$("$nvcc" --help)"
if awk '/--compress-mode/ {on=1} on && /--no-compress|^$/ && !/--compress-mode/ {exit} on' <<<"$help" | grep -q "'none'"; then
  nocompress=(--compress-mode=none)
elif grep -q -- '--no-compress' <<<"$help"; then
  nocompress=(--no-compress)
else
  nocompress=(-Xfatbin=-compress=false)
fi

flags=(-fatbin -O3 -std=c++17 "${gencode[@]}" "${nocompress[@]}")
version="$("$nvcc" --version | grep -i 'release' | head -n 1)"

mkdir -p "$out"
out="$(cd "$out" && pwd)"

cd "$here"
shopt -s nullglob
sources=(*.cu)
if [ ${#sources[@]} -eq 0 ]; then
  echo "build.sh: FATAL: no .cu files in $here" >&2
  exit 1
fi

hopper_flags=(-fatbin -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a "${nocompress[@]}")
for src in "${sources[@]}"; do
  name="${src%.cu}"
  f=("${flags[@]}")
  if grep -q '^// build.sh: sm_90a only' "$src"; then
    f=("${hopper_flags[@]}")
  fi
  echo "nvcc ${f[*]} -o $name.fatbin $src"
  "$nvcc" "${f[@]}" -o "$out/$name.fatbin.tmp" "$src"
  mv -f "$out/$name.fatbin.tmp" "$out/$name.fatbin"
done

# The headers the .cu files include are hashed with them: a change to one
# asks for a rebuild too.
headers=(*.cuh)
{
  echo "# nvcc: $version"
  echo "# flags: ${flags[*]}"
  echo "# flags (sm_90a only): ${hopper_flags[*]}"
  sha256sum "${sources[@]}" "${headers[@]}"
} >"$out/SOURCES.sha256.tmp"
mv -f "$out/SOURCES.sha256.tmp" "$out/SOURCES.sha256"

echo "build.sh: wrote ${#sources[@]} fatbins and SOURCES.sha256 to $out"
