// Package ptx is goamp's kernel back end: it writes a module of kernel IR
// (package kernel/ir) as PTX text, which the NVIDIA driver JIT-compiles
// (cuModuleLoadData). There is no PTX assembler at build time, so the
// package writes only forms the PTX ISA manual documents, and tests compare
// its output with checked-in files (testdata/*.ptx; go test -update
// rewrites them).
//
// # Module
//
// Emit writes a header (a comment recording the PTX ISA version and
// architecture the module needs, then .version, .target and .address_size
// 64) and every Func as a .visible .entry of its own name: the name the
// runtime looks the kernel up by, so it must already be a PTX identifier
// and not a keyword. The runtime may move the header to the device at hand
// with Retarget and VersionForDriver. The text depends on nothing but the
// IR and the Options, byte for byte, because the driver caches what it
// compiles by the text.
//
// # Registers
//
// Every IR value gets a virtual register of its own, numbered in the order
// the values appear, and ptxas allocates the real ones. The classes are
//
//	Bool       %p   .pred
//	I32, U32   %r   .b32
//	I64, U64   %rd  .b64
//	F32        %f   .f32
//	F64        %fd  .f64
//
// each declared once at the top of the entry (.reg .b32 %r<N>;) if used.
// Temporaries (for a phi cycle, a NaN test) are numbered after the values.
// Parameters, shared arrays and local arrays become symbols p<k>_<i>_name,
// s<k>_<i>_name and l<k>_<i>_name, for kernel k and item i: unique in the
// module whatever the source names were, and never a keyword. Shared and
// local arrays are declared in the entry (.shared .align 16, so that the
// back end may use 128-bit loads of tile_static rows; .local .align 8);
// SharedAddr and LocalAddr take their address in their own state space
// with mov, as ld.shared/ld.local and st.shared/st.local want it.
// Global addresses go to ld.global, st.global and atom.global as they
// come, without NVCC's cvta.to.global: the IR does not know which U64
// parameters are pointers, and a device pointer's generic address is its
// global address on every GPU CUDA runs on (the hand-written kernels in
// internal/cuda rely on the same).
//
// # Control flow and phis
//
// Blocks unreachable from the entry are dropped; the others keep their IR
// order and fall through where they can (branches are plain bra, never
// bra.uni, which would promise ptxas a uniform branch). Phis are taken out
// of SSA form by copies on the incoming edges: at the end of a predecessor
// with one successor, or, where the predecessor branches two ways (a
// critical edge, or any edge of an If into a block with phis), in a block
// of its own on that edge, so that the copies run on that edge alone. The
// copies of one edge are a parallel copy, ordered so that no copy
// overwrites a register another still has to read; a cycle (x, y = y, x)
// is broken with one temporary per register class.
//
// # Arithmetic
//
// Integer arithmetic is typed by the IR type (add.s32, div.u64, shr.s64);
// bitwise operations by size (and.b32), and on Bool by and/or/xor/not.pred.
// Float add, sub and mul carry no rounding modifier, so ptxas may contract
// them into fma (Go allows the fusion); div is div.rn. Float min and max
// follow Go (NaN if either operand is): min.NaN.f32 where the target is
// sm_80 and PTX 7.0 or newer, otherwise, and for f64 always, min or max
// followed by a NaN test (setp.nan) that overrides the result. Float
// comparisons are ordered except Ne, which is neu. Conversions follow Go:
// float to integer truncates (cvt.rzi), integer to float and f64 to f32
// round to nearest even, integers extend by the source's signedness, and
// Bool converts with setp (x != 0) and selp (1 or 0).
//
// # Math
//
// The back end writes only what the hardware has; irmath lowers the rest
// into other IR first, and any other OpMath is an error:
//
//	Sqrt           sqrt.rn (f32, f64); sqrt.approx.f32 if Fast
//	Rsqrt          rsqrt.approx if Fast; else sqrt.rn then div.rn 1/x
//	Fma            fma.rn
//	Abs            abs
//	Floor, Ceil,   cvt.rmi, cvt.rpi, cvt.rzi to the same float type
//	Trunc
//	Exp2, Log2,    ex2, lg2, sin, cos, tanh .approx.f32:
//	Sin, Cos,      only for F32 with Fast (tanh needs sm_75)
//	Tanh
//
// # Memory, atomics, barriers, shuffles, status
//
// Atomics are atom.global or atom.shared (add, min, max, exch, cas); an
// atomic on local memory, which atom cannot address and no other thread
// can see, is a load, the operation and a store. OpBarrier is bar.sync 0
// when every thread reaches it together and barrier.sync 0 otherwise
// (which lets the threads of a warp arrive apart: sm_70). OpShuffle is
// shfl.sync over the whole warp. OpStatus claims the status record with
// atom.global.cas and, in the thread that won, fills it in with stores
// guarded by a predicate.
package ptx
