package frontend

import (
	"go/ast"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestParseDirective: the directive's options, and a one-line refusal
// naming each mistake.
func TestParseDirective(t *testing.T) {
	fset := token.NewFileSet()
	parse := func(text string) (directive, *Error) {
		return parseDirective(&ast.CommentGroup{List: []*ast.Comment{{Text: text}}}, fset)
	}
	for _, c := range []struct {
		text         string
		tile         []int
		blocks, regs int
	}{
		{"//goamp:kernel", nil, 0, 0},
		{"//goamp:kernel tile=16,16", []int{16, 16}, 0, 0},
		{"//goamp:kernel tile=32,32 blocks=2", []int{32, 32}, 2, 0},
		{"//goamp:kernel blocks=4 tile=256", []int{256}, 4, 0},
		{"//goamp:kernel regs=32", nil, 0, 32},
		{"//goamp:kernel tile=16,16 regs=40", []int{16, 16}, 0, 40},
	} {
		d, err := parse(c.text)
		if err != nil || !slices.Equal(d.tile, c.tile) || d.blocks != c.blocks || d.regs != c.regs {
			t.Errorf("%q: %+v, %v; want tile %v blocks %d regs %d", c.text, d, err, c.tile, c.blocks, c.regs)
		}
	}
	if d, err := parse("//goamp:kernel regs=32 regs[float32]=48 regs[int32,float64]=40"); err != nil || d.regs != 32 || d.regsFor["float32"] != 48 || d.regsFor["int32,float64"] != 40 {
		t.Errorf("per-instance regs: %+v, %v", d, err)
	}
	for _, c := range []struct{ text, want string }{
		{"//goamp:kernel blocks=2", "needs tile="},
		{"//goamp:kernel tile=32,32 blocks=0", "want 1 to 32"},
		{"//goamp:kernel tile=32,32 blocks=x", "want 1 to 32"},
		{"//goamp:kernel tile=2048", "want 1 to 1024"},
		{"//goamp:kernel tile=64,64", "1024 threads a tile"},
		{"//goamp:kernel shared=4", `unknown option "shared=4"`},
		{"//goamp:kernel regs=8", "want 16 to 255"},
		{"//goamp:kernel regs[float32]=8", "want regs[T]=R"},
		{"//goamp:kernel regs[]=32", "want regs[T]=R"},
		{"//goamp:kernel regs[float32]", "want regs[T]=R"},
		{"//goamp:kernel regs=256", "want 16 to 255"},
	} {
		if _, err := parse(c.text); err == nil || !strings.Contains(err.Msg, c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.text, err, c.want)
		}
	}
}
