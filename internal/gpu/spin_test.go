package gpu

import (
	"testing"
	"time"

	"github.com/goamp/goamp/internal/cuda"
)

// TestSpin: the spin kernel keeps the GPU busy for the time asked, by the
// GPU's own clock.
func TestSpin(t *testing.T) {
	dev, err := Open(0)
	if err != nil {
		t.Skipf("SKIP: no CUDA GPU here: %v", err)
	}
	ctx := dev.Context
	start, err := ctx.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer start.Destroy()
	end, err := ctx.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer end.Destroy()
	if err := dev.Spin(time.Millisecond); err != nil { // loads the module, untimed
		t.Fatal(err)
	}
	if err := start.Record(nil); err != nil {
		t.Fatal(err)
	}
	if err := dev.Spin(2 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := end.Record(nil); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Fatal(err)
	}
	ms, err := cuda.ElapsedMillis(start, end)
	if err != nil || ms < 1.95 || ms > 10 {
		t.Errorf("a 2ms spin took %gms (%v)", ms, err)
	}
}
