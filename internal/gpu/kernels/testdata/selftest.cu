// selftest.cu: a host-only check of the built fatbins on a real GPU, through
// the CUDA driver API, the way the Go side will use them (cuModuleLoadData on
// the fatbin bytes, cuModuleGetFunction by extern "C" name, cuLaunchKernel).
// Not part of the Go build (testdata/ is ignored by go) and not compiled by
// build.sh. Run it with device_check.sh on a machine with a GPU and nvcc:
//
//   nvcc -O2 -std=c++17 -o selftest selftest.cu -lcuda && ./selftest DIR
//
// where DIR holds the *.fatbin files. It checks every kernel against a host
// reference on odd shapes, padded strides, beta == 0 over NaN, alpha == 0 over
// NaN, int32 wraparound, and every block size the dot kernels allow, and
// prints each function's registers, static shared memory and SASS version.
#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                  \
    do {                                                                       \
        CUresult r_ = (x);                                                     \
        if (r_ != CUDA_SUCCESS) {                                              \
            const char* s_ = "?";                                              \
            cuGetErrorString(r_, &s_);                                         \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_);    \
            exit(2);                                                           \
        }                                                                      \
    } while (0)

static int failures = 0;
static int checks = 0;
static std::mt19937 rng(12345);

template <typename T> struct Ty;
template <> struct Ty<float> { static const char* name() { return "f32"; } static double tol() { return 1e-5; } };
template <> struct Ty<double> { static const char* name() { return "f64"; } static double tol() { return 1e-13; } };
template <> struct Ty<int> { static const char* name() { return "i32"; } static double tol() { return 0; } };

template <typename T> T rnd() {
    if constexpr (std::is_same<T, int>::value) {
        return (int)(uint32_t)rng(); // full range: products and sums wrap
    } else {
        return (T)std::uniform_real_distribution<double>(-1, 1)(rng);
    }
}
template <typename T> T garbage() {
    if constexpr (std::is_same<T, int>::value) return 0x7fffffff;
    else return std::numeric_limits<T>::quiet_NaN();
}

static CUmodule load(const std::string& dir, const std::string& name) {
    std::string path = dir + "/" + name + ".fatbin";
    std::ifstream f(path, std::ios::binary);
    if (!f) { fprintf(stderr, "cannot open %s\n", path.c_str()); exit(2); }
    std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    CUmodule m;
    CK(cuModuleLoadData(&m, data.data()));
    return m;
}

static CUfunction get(CUmodule m, const std::string& sym) {
    CUfunction fn;
    CUresult r = cuModuleGetFunction(&fn, m, sym.c_str());
    if (r != CUDA_SUCCESS) {
        printf("FAIL missing symbol %s\n", sym.c_str());
        failures++;
        return nullptr;
    }
    int regs = 0, shared = 0, bin = 0, ptx = 0, maxt = 0;
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
    cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
    cuFuncGetAttribute(&bin, CU_FUNC_ATTRIBUTE_BINARY_VERSION, fn);
    cuFuncGetAttribute(&ptx, CU_FUNC_ATTRIBUTE_PTX_VERSION, fn);
    cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn);
    printf("func %-20s regs %3d static-smem %6d B  binary sm_%d ptx %d  max-threads %d\n",
           sym.c_str(), regs, shared, bin, ptx, maxt);
    return fn;
}

struct Buf {
    CUdeviceptr p = 0;
    explicit Buf(size_t bytes) { CK(cuMemAlloc(&p, bytes ? bytes : 8)); }
    ~Buf() { cuMemFree(p); }
};

// C = alpha*A*B + beta*C through fn; tile == 0 means the naive kernel (bx x by block).
template <typename T>
static void matmul_case(CUfunction fn, const std::string& sym, int tile, int bx, int by,
                        int M, int N, int K, int pad, T alpha, T beta, bool nanA) {
    if (!fn) return;
    int lda = K + pad, ldb = N + pad, ldc = N + pad;
    if (lda < 1) lda = 1;
    std::vector<T> A((size_t)M * lda), B((size_t)K * ldb), C((size_t)M * ldc);
    for (auto& v : A) v = rnd<T>();
    for (auto& v : B) v = rnd<T>();
    bool cGarbage = (beta == T(0));
    for (auto& v : C) v = cGarbage ? garbage<T>() : rnd<T>();
    if (nanA) for (auto& v : A) v = garbage<T>();
    Buf dA(A.size() * sizeof(T)), dB(B.size() * sizeof(T)), dC(C.size() * sizeof(T));
    if (!A.empty()) CK(cuMemcpyHtoD(dA.p, A.data(), A.size() * sizeof(T)));
    if (!B.empty()) CK(cuMemcpyHtoD(dB.p, B.data(), B.size() * sizeof(T)));
    CK(cuMemcpyHtoD(dC.p, C.data(), C.size() * sizeof(T)));
    int gx, gy;
    if (tile) { bx = by = tile; }
    gx = (N + bx - 1) / bx;
    gy = (M + by - 1) / by;
    void* args[] = {&M, &N, &K, &alpha, &dA.p, &lda, &dB.p, &ldb, &beta, &dC.p, &ldc};
    CK(cuLaunchKernel(fn, gx, gy, 1, bx, by, 1, 0, 0, args, nullptr));
    CK(cuCtxSynchronize());
    std::vector<T> R(C.size());
    CK(cuMemcpyDtoH(R.data(), dC.p, R.size() * sizeof(T)));
    int bad = 0;
    double worst = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < ldc; j++) {
            size_t ci = (size_t)i * ldc + j;
            T got = R[ci];
            if (j >= N) { // padding must be untouched
                if (memcmp(&got, &C[ci], sizeof(T)) != 0) bad++;
                continue;
            }
            if constexpr (std::is_same<T, int>::value) {
                uint32_t acc = 0;
                if (alpha != 0) {
                    for (int k = 0; k < K; k++) acc += (uint32_t)A[(size_t)i * lda + k] * (uint32_t)B[(size_t)k * ldb + j];
                    acc *= (uint32_t)alpha;
                }
                if (beta != 0) acc += (uint32_t)beta * (uint32_t)C[ci];
                if ((uint32_t)got != acc) bad++;
            } else {
                double acc = 0, mag = 0;
                if (alpha != T(0)) {
                    for (int k = 0; k < K; k++) {
                        double p = (double)A[(size_t)i * lda + k] * (double)B[(size_t)k * ldb + j];
                        acc += p;
                        mag += fabs(p);
                    }
                    acc *= alpha;
                    mag *= fabs((double)alpha);
                }
                if (beta != T(0)) { acc += (double)beta * C[ci]; mag += fabs((double)beta * C[ci]); }
                double err = fabs((double)got - acc);
                double rel = err / (mag > 0 ? mag : 1);
                if (!(std::isfinite((double)got)) || rel > Ty<T>::tol() * (K + 2)) bad++;
                if (rel > worst) worst = rel;
            }
        }
    }
    checks++;
    if (bad) failures++;
    printf("%s %-20s M=%d N=%d K=%d pad=%d alpha=%g beta=%g%s block=%dx%d: %d bad, worst rel %.2e\n",
           bad ? "FAIL" : "ok  ", sym.c_str(), M, N, K, pad, (double)alpha, (double)beta,
           nanA ? " nanA" : "", bx, by, bad, worst);
}

template <typename T>
static void matmul_all(CUfunction fn, const std::string& sym, int tile) {
    struct S { int M, N, K, pad; };
    const S shapes[] = {{1, 1, 1, 0}, {37, 53, 41, 3}, {64, 64, 64, 0}, {100, 7, 129, 1},
                        {5, 300, 33, 0}, {33, 17, 0, 2}, {257, 129, 70, 0}};
    for (const S& s : shapes) {
        matmul_case<T>(fn, sym, tile, 16, 16, s.M, s.N, s.K, s.pad, T(2), T(0), false);
    }
    matmul_case<T>(fn, sym, tile, 16, 16, 37, 53, 41, 1, T(3), T(-2), false);
    matmul_case<T>(fn, sym, tile, 16, 16, 37, 53, 41, 1, T(0), T(3), true); // alpha 0: A unread
    matmul_case<T>(fn, sym, tile, 16, 16, 37, 53, 41, 1, T(0), T(0), true);
    if (!tile) { // naive takes any block shape
        matmul_case<T>(fn, sym, tile, 32, 8, 45, 70, 19, 0, T(1), T(1), false);
        matmul_case<T>(fn, sym, tile, 1, 1, 5, 6, 7, 0, T(1), T(0), false);
        matmul_case<T>(fn, sym, tile, 1024, 1, 3, 1500, 9, 0, T(1), T(0), false);
    }
}

// dot: partials from fn, summed here.
template <typename T>
static void dot_case(CUfunction fn, const std::string& sym, bool warp, int n, int block, int grid) {
    if (!fn) return;
    std::vector<T> x(n), y(n);
    for (auto& v : x) v = rnd<T>();
    for (auto& v : y) v = rnd<T>();
    Buf dx(n * sizeof(T)), dy(n * sizeof(T)), dp(grid * sizeof(T));
    if (n) {
        CK(cuMemcpyHtoD(dx.p, x.data(), n * sizeof(T)));
        CK(cuMemcpyHtoD(dy.p, y.data(), n * sizeof(T)));
    }
    std::vector<T> g(grid, garbage<T>());
    CK(cuMemcpyHtoD(dp.p, g.data(), grid * sizeof(T)));
    unsigned smem = warp ? (block / 32) * sizeof(T) : block * sizeof(T);
    void* args[] = {&n, &dx.p, &dy.p, &dp.p};
    CK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, smem, 0, args, nullptr));
    CK(cuCtxSynchronize());
    std::vector<T> p(grid);
    CK(cuMemcpyDtoH(p.data(), dp.p, grid * sizeof(T)));
    bool bad = false;
    double rel = 0;
    if constexpr (std::is_same<T, int>::value) {
        uint32_t want = 0, got = 0;
        for (int i = 0; i < n; i++) want += (uint32_t)x[i] * (uint32_t)y[i];
        for (int i = 0; i < grid; i++) got += (uint32_t)p[i];
        bad = want != got;
    } else {
        double want = 0, mag = 0, got = 0;
        for (int i = 0; i < n; i++) { want += (double)x[i] * y[i]; mag += fabs((double)x[i] * y[i]); }
        for (int i = 0; i < grid; i++) got += p[i];
        rel = fabs(got - want) / (mag > 0 ? mag : 1);
        double per = (double)n / ((double)grid * block) + 12;
        bad = !std::isfinite(got) || rel > Ty<T>::tol() * per * 4;
    }
    checks++;
    if (bad) failures++;
    printf("%s %-20s n=%d block=%d grid=%d smem=%u: rel %.2e\n", bad ? "FAIL" : "ok  ", sym.c_str(),
           n, block, grid, smem, rel);
}

template <typename T>
static void dot_all(CUfunction fn, const std::string& sym, bool warp) {
    const int blocks[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    const int ns[] = {0, 1, 31, 1000, 100003};
    for (int b : blocks) {
        for (int n : ns) {
            int grid = (n + b - 1) / b;
            if (grid < 1) grid = 1;
            if (grid > 264) grid = 264;
            dot_case<T>(fn, sym, warp, n, b, grid);
        }
    }
    dot_case<T>(fn, sym, warp, 5, 256, 7); // blocks with no elements must write 0
    dot_case<T>(fn, sym, warp, 3000000, 1024, 132);
}

int main(int argc, char** argv) {
    std::string dir = argc > 1 ? argv[1] : ".";
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    char name[256];
    CK(cuDeviceGetName(name, sizeof name, dev));
    int drv = 0;
    cuDriverGetVersion(&drv);
    printf("device %s, driver CUDA %d.%d\n", name, drv / 1000, (drv % 1000) / 10);
    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));

    CUmodule naive = load(dir, "matmul_naive");
    CUmodule tiled = load(dir, "matmul_tiled");
    CUmodule dshared = load(dir, "dot_shared");
    CUmodule dwarp = load(dir, "dot_warp");

    matmul_all<float>(get(naive, "matmul_naive_f32"), "matmul_naive_f32", 0);
    matmul_all<double>(get(naive, "matmul_naive_f64"), "matmul_naive_f64", 0);
    matmul_all<int>(get(naive, "matmul_naive_i32"), "matmul_naive_i32", 0);
    for (int t : {8, 16, 32}) {
        std::string base = "matmul_tiled" + std::to_string(t) + "_";
        matmul_all<float>(get(tiled, base + "f32"), base + "f32", t);
        matmul_all<double>(get(tiled, base + "f64"), base + "f64", t);
        matmul_all<int>(get(tiled, base + "i32"), base + "i32", t);
    }
    dot_all<float>(get(dshared, "dot_shared_f32"), "dot_shared_f32", false);
    dot_all<double>(get(dshared, "dot_shared_f64"), "dot_shared_f64", false);
    dot_all<int>(get(dshared, "dot_shared_i32"), "dot_shared_i32", false);
    dot_all<float>(get(dwarp, "dot_warp_f32"), "dot_warp_f32", true);
    dot_all<double>(get(dwarp, "dot_warp_f64"), "dot_warp_f64", true);
    dot_all<int>(get(dwarp, "dot_warp_i32"), "dot_warp_i32", true);

    printf("selftest: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
