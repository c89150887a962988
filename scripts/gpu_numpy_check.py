"""Multiplies NumPy matrices of odd shapes with goamp on the GPU, with every
GPU kernel and tile, in float32, float64 and int32 (dmma: float64, and the
others refused), and compares each result with NumPy's own product; then
float32 in each reduced precision (mma, wgmma on Hopper, and auto choosing one), compared
with NumPy's product of the operands rounded as the precision says, and
float64 and int32 refused. Used by scripts/gpu-check.sh on the GPU machine.

usage: gpu_numpy_check.py GOAMP WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

goamp, work = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(12345)
shapes = [(1, 1, 1), (37, 53, 41), (1, 300, 257), (300, 1, 257), (129, 65, 200), (64, 64, 64), (513, 257, 131)]
runs = [("naive", None, None), ("reg128", None, None), ("dmma", None, None), ("tiled", 8, None), ("tiled", 16, None), ("tiled", 32, None),
        ("go-simple", None, None), ("go-tiled", 16, None), ("go-tiled", 32, None), ("auto", None, None),
        ("mma", None, "tf32"), ("mma", None, "bf16"), ("mma", None, "fp16"), ("auto", None, "bf16"),
        ("wgmma", None, "tf32"), ("wgmma", None, "bf16"), ("wgmma", None, "fp16")]


def rounded(x, precision):
    """x (float32) rounded as the tensor-core kernels round an operand."""
    u = x.astype(np.float32).view(np.uint32)
    if precision == "tf32":  # to nearest even
        return ((u + np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)).view(np.float32)
    if precision == "bf16":  # to nearest even
        return ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)).view(np.float32)
    return x.astype(np.float16).astype(np.float32)  # fp16: NumPy rounds to nearest even


failures = 0
checked = 0
for dtype in (np.float32, np.float64, np.int32):
    for m, n, k in shapes:
        if dtype == np.int32:
            a = rng.integers(-8, 9, size=(m, k)).astype(dtype)
            b = rng.integers(-8, 9, size=(k, n)).astype(dtype)
        else:
            a = rng.uniform(-1, 1, size=(m, k)).astype(dtype)
            b = rng.uniform(-1, 1, size=(k, n)).astype(dtype)
        if m == 129:
            b = np.asfortranarray(b)  # a Fortran-order operand too
        pa, pb, pc = (os.path.join(work, f) for f in ("a.npy", "b.npy", "c.npy"))
        np.save(pa, a)
        np.save(pb, b)
        eps = {np.float32: 2.0**-24, np.float64: 2.0**-53, np.int32: 0.0}[dtype]
        tol = min(4 * (k + 2), 16 * np.sqrt(k + 2)) * eps
        for kernel, tile, precision in runs:
            ra, rb = (rounded(a, precision), rounded(b, precision)) if precision and dtype == np.float32 else (a, b)
            want = ra.astype(np.float64) @ rb.astype(np.float64)
            bound = np.abs(ra.astype(np.float64)) @ np.abs(rb.astype(np.float64))
            cmd = [goamp, "matmul", "--device", "cuda", "--a", pa, "--b", pb, "--out", pc, "--kernel", kernel]
            if tile:
                cmd += ["--tile", str(tile)]
            if precision:
                cmd += ["--precision", precision]
            r = subprocess.run(cmd, capture_output=True, text=True)
            checked += 1
            name = f"{np.dtype(dtype).name} {m}x{n}x{k} {kernel}{'/' + str(tile) if tile else ''}{' ' + precision if precision else ''}"
            if precision and dtype != np.float32:
                # A reduced precision rounds float32 only: a usage error.
                if r.returncode != 2 or "rounds float32 operands" not in r.stderr:
                    print(f"FAIL {name}: want exit 2 (float32 only), got exit {r.returncode}: {r.stderr.strip()}")
                    failures += 1
                continue
            if kernel == "dmma" and dtype != np.float64:
                # float64 only: refused as a usage error, naming the type.
                if r.returncode != 2 or "float64" not in r.stderr:
                    print(f"FAIL {name}: want exit 2 naming float64, got exit {r.returncode}: {r.stderr.strip()}")
                    failures += 1
                continue
            if r.returncode != 0:
                print(f"FAIL {name}: exit {r.returncode}: {r.stderr.strip()}")
                failures += 1
                continue
            got = np.load(pc)
            if got.dtype != dtype or got.shape != (m, n):
                print(f"FAIL {name}: got {got.dtype} {got.shape}")
                failures += 1
                continue
            if dtype == np.int32:
                ok = np.array_equal(got, want.astype(np.int64).astype(np.int32))
                err = 0 if ok else np.max(np.abs(got.astype(np.int64) - want))
            else:
                err = float(np.max(np.abs(got.astype(np.float64) - want) / np.maximum(bound, 1e-300)))
                ok = err <= tol
            if not ok:
                print(f"FAIL {name}: error {err:.3g} (tolerance {tol:.3g})")
                failures += 1
# float16 in and out: auto and mma (the FP16 tensor cores: rounding float16 to FP16
# changes nothing) and reg128 (float32), against NumPy's float64 product
# of the float16 values, within float32's tolerance for the sum plus one
# rounding of the result to float16.
for m, n, k in shapes:
    a = rng.uniform(-1, 1, size=(m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, size=(k, n)).astype(np.float16)
    pa, pb, pc = (os.path.join(work, f) for f in ("a.npy", "b.npy", "c.npy"))
    np.save(pa, a)
    np.save(pb, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    bound = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    tol = min(4 * (k + 2), 16 * np.sqrt(k + 2)) * 2.0**-24
    for kernel in ("auto", "mma", "reg128"):
        r = subprocess.run([goamp, "matmul", "--device", "cuda", "--a", pa, "--b", pb, "--out", pc, "--kernel", kernel], capture_output=True, text=True)
        checked += 1
        name = f"float16 {m}x{n}x{k} {kernel}"
        if r.returncode != 0:
            print(f"FAIL {name}: exit {r.returncode}: {r.stderr.strip()}")
            failures += 1
            continue
        got = np.load(pc)
        err = np.abs(got.astype(np.float64) - want)
        ok = got.dtype == np.float16 and got.shape == (m, n) and np.all(err <= tol * bound + 2.0**-11 * np.abs(want) + 2.0**-25)
        if not ok:
            print(f"FAIL {name}: {got.dtype} {got.shape}, worst error {float(np.max(err)):.3g}")
            failures += 1
print(f"numpy: {checked - failures} of {checked} products match NumPy within the type's tolerance")
sys.exit(1 if failures else 0)
