package frontend

import (
	"testing"
)

func TestLoadGood(t *testing.T) {
	pkg, err := Load("testdata/good", ".")
	if err != nil {
		t.Fatal(err)
	}
	regs := map[string]int{}
	for _, k := range pkg.Kernels {
		regs[k.Name] = k.Regs
		if f := k.Funcs[1]; f != nil && f.MaxRegs != k.Regs {
			t.Errorf("%s: MaxRegs %d, want %d", k.Name, f.MaxRegs, k.Regs)
		}
		t.Logf("%s tiled=%v args=%d", k.Name, k.Tiled, len(k.Args))
		if testing.Verbose() && k.GoName == "Transpose" {
			t.Log(k.Funcs[2])
		}
	}
	// regs[float64]=40 on dot: that instance alone.
	if regs["dot[float64]"] != 40 || regs["dot[float32]"] != 0 || regs["Scale"] != 0 {
		t.Errorf("per-instance register caps: %v", regs)
	}
}
