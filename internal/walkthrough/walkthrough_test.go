package walkthrough

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/goamp/goamp/amp"
)

// TestSteps runs every step on every accelerator of the machine: the CPU
// always, and each CUDA GPU where there is one, where the kernels of steps
// 2 and 3 are the PTX goampgen compiled from them.
func TestSteps(t *testing.T) {
	want3 := "[[47 52 57] [64 71 78] [81 90 99]]"
	if got := fmt.Sprint(MultiplyWithOutAMP()); got != want3 {
		t.Errorf("MultiplyWithOutAMP = %s, want %s", got, want3)
	}
	for _, acc := range amp.Accelerators() {
		t.Run(acc.Path(), func(t *testing.T) {
			v := acc.DefaultView()
			p, err := MultiplyWithAMP(v)
			if err != nil || fmt.Sprint(p) != "[47 52 57 64 71 78 81 90 99]" {
				t.Errorf("MultiplyWithAMP = %v, %v", p, err)
			}
			p, err = MultiplyWithTiling(v)
			// A = [1 2 3 4; 5 6 7 8; 1 2 3 4; 5 6 7 8]; A*A by hand.
			if want := "[34 44 54 64 82 108 134 160 34 44 54 64 82 108 134 160]"; err != nil || fmt.Sprint(p) != want {
				t.Errorf("MultiplyWithTiling = %v, %v; want %s", p, err, want)
			}
			got, want, err := DotProduct(v)
			if err != nil || got != want || want != 1024*1023 {
				t.Errorf("DotProduct = %v, want %v (%v)", got, want, err)
			}
		})
	}
}

func TestRunPrintsEveryStep(t *testing.T) {
	var out bytes.Buffer
	if err := Run(&out, amp.CPU().DefaultView()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"MultiplyWithOutAMP", "MultiplyWithAMP", "MultiplyWithTiling", "product[0][0] = 34", "dot = 1047552", "correct"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("walkthrough output lacks %q:\n%s", s, out.String())
		}
	}
}
