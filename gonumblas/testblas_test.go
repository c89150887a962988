package gonumblas

import (
	"testing"

	"gonum.org/v1/gonum/blas/testblas"
)

// gonum's conformance suite for float64 BLAS, run against Implementation.
// Dgemm and Ddot are ours; the rest check that embedding gonum's
// implementation passes its routines through unchanged.

var impl Implementation

func TestDgemm(t *testing.T)  { testblas.TestDgemm(t, impl) }
func TestDdot(t *testing.T)   { testblas.DdotTest(t, impl) }
func TestDasum(t *testing.T)  { testblas.DasumTest(t, impl) }
func TestDaxpy(t *testing.T)  { testblas.DaxpyTest(t, impl) }
func TestDcopy(t *testing.T)  { testblas.DcopyTest(t, impl) }
func TestDnrm2(t *testing.T)  { testblas.Dnrm2Test(t, impl) }
func TestIdamax(t *testing.T) { testblas.IdamaxTest(t, impl) }
func TestDswap(t *testing.T)  { testblas.DswapTest(t, impl) }
func TestDscal(t *testing.T)  { testblas.DscalTest(t, impl) }
func TestDrot(t *testing.T)   { testblas.DrotTest(t, impl) }
func TestDrotg(t *testing.T)  { testblas.DrotgTest(t, impl, false) }
func TestDrotm(t *testing.T)  { testblas.DrotmTest(t, impl) }
func TestDrotmg(t *testing.T) { testblas.DrotmgTest(t, impl) }

func TestDgemv(t *testing.T) { testblas.DgemvTest(t, impl) }
func TestDger(t *testing.T)  { testblas.DgerTest(t, impl) }
func TestDgbmv(t *testing.T) { testblas.DgbmvTest(t, impl) }
func TestDtxmv(t *testing.T) { testblas.DtxmvTest(t, impl) }
func TestDtrmv(t *testing.T) { testblas.DtrmvTest(t, impl) }
func TestDtrsv(t *testing.T) { testblas.DtrsvTest(t, impl) }
func TestDtbmv(t *testing.T) { testblas.DtbmvTest(t, impl) }
func TestDtbsv(t *testing.T) { testblas.DtbsvTest(t, impl) }
func TestDtpmv(t *testing.T) { testblas.DtpmvTest(t, impl) }
func TestDtpsv(t *testing.T) { testblas.DtpsvTest(t, impl) }
func TestDsymv(t *testing.T) { testblas.DsymvTest(t, impl) }
func TestDsbmv(t *testing.T) { testblas.DsbmvTest(t, impl) }
func TestDspmv(t *testing.T) { testblas.DspmvTest(t, impl) }
func TestDsyr(t *testing.T)  { testblas.DsyrTest(t, impl) }
func TestDsyr2(t *testing.T) { testblas.Dsyr2Test(t, impl) }
func TestDspr(t *testing.T)  { testblas.DsprTest(t, impl) }
func TestDspr2(t *testing.T) { testblas.Dspr2Test(t, impl) }

func TestDsymm(t *testing.T)  { testblas.DsymmTest(t, impl) }
func TestDsyrk(t *testing.T)  { testblas.DsyrkTest(t, impl) }
func TestDsyr2k(t *testing.T) { testblas.Dsyr2kTest(t, impl) }
func TestDtrmm(t *testing.T)  { testblas.DtrmmTest(t, impl) }
func TestDtrsm(t *testing.T)  { testblas.DtrsmTest(t, impl) }
