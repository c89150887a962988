// Package interp runs an ir.Func on the CPU, so that tests can check the IR
// a front end or a lowering pass produces without a GPU.
//
// Launch follows what PTX does on sm_70 and later, as far as a test can
// observe it:
//
//   - Every thread has its own SSA values. Global memory is a Memory, a flat
//     little-endian byte space with allocations at nonzero, 256-byte aligned
//     addresses. Each block has its own zeroed shared memory laid out as
//     ir.Func.SharedBytes says (arrays in order, each 8-byte aligned,
//     starting at address 0). Each thread has its own zeroed local memory;
//     OpLocalAddr gives an address in a local window that is the same for
//     every thread, as PTX's local addresses are.
//   - The threads of a block run one at a time, in order of their linear id
//     (x fastest), each until it returns or reaches an OpBarrier or an
//     OpShuffle. A barrier completes when every thread of the block that has
//     not returned waits at one (exited threads do not hold a barrier up). A
//     shuffle completes when every lane of the warp waits at one; a shuffle
//     that only part of a warp reaches, the rest having returned or waiting
//     at a barrier, is an error, as it would hang or be undefined on a GPU.
//     Blocks run one after another. A launch is therefore deterministic:
//     atomics and races resolve the same way every time.
//   - Integer arithmetic wraps; integer division by zero is an error (the
//     front end guards it, so reaching one is a bug), MinInt / -1 wraps.
//     Float arithmetic rounds each operation to its type: nothing is fused
//     (a GPU may fuse a mul and an add into an fma, which is more accurate;
//     code that depends on either must use OpMath Fma explicitly). Float
//     Min and Max follow Go (NaN if either operand is NaN, -0 below +0).
//     Float to integer conversion truncates and saturates like PTX's
//     cvt.rzi: NaN gives 0, values out of range the type's min or max.
//   - OpMath computes with Go's math package, rounded to the value's type
//     (F32 through float64, which for Sqrt and the rounding of the result
//     is exact; F32 Fma is correctly rounded). The hardware approximations
//     a Fast flag allows are not modelled: the interpreter's fast math is as
//     exact as its precise math, so a test of fast math checks the lowering
//     around the approximation, not the approximation. Where Go's math is
//     wrong on amd64 the interpreter works around it: Exp overflows to +Inf
//     from 709.09 instead of 709.78, Log and Pow take subnormals for
//     normals (golang/go#56600). Two weaknesses remain, which matter only
//     for float64 IR that irmath has not lowered: math.Sin and math.Cos
//     lose accuracy beyond 2^29 (10^4 ulps and more for results near 0),
//     and math.Pow can be tens of ulps off when y·log x is large.
//   - A launch that runs more than about a billion steps returns an error:
//     a hung kernel must not hang its test.
//
// Errors name the function, the block and the value, as `interp: saxpy:
// b2: v12 = div i32 v10 v11: integer division by zero`.
package interp
