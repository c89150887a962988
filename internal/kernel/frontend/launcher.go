package frontend

import (
	"fmt"
	"go/types"
	"strings"
	"unicode"
)

// GeneratedFile is the name of the file goampgen writes in a kernels'
// package.
const GeneratedFile = "goamp_kernels.go"

// Launcher is the generated function that runs a kernel on any
// accelerator view: its name, its own parameters' names (chosen not to
// hide the kernel's) and its signature.
type Launcher struct {
	Name       string // LaunchTranspose, or launchTranspose for an unexported kernel
	Kernel     string // the kernel function's name
	On, Domain string // names of the view and domain parameters
	Index      string // name of the index in the CPU closure
	Tiled      bool
	TypeParams string   // "[T amp.Element]" or ""
	TypeArgs   string   // "[T]" or ""
	TypeNames  []string // "T"
	Params     []string // the kernel's parameters after the index, "name type"
	ArgNames   []string
}

// NewLauncher describes the launcher of kernel name with signature sig,
// writing types with qual. It fails if the signature is not a kernel's.
func NewLauncher(name string, sig *types.Signature, qual types.Qualifier) (*Launcher, error) {
	if sig.Params().Len() == 0 {
		return nil, fmt.Errorf("kernel %s has no index parameter", name)
	}
	l := &Launcher{Kernel: name, Name: "Launch" + UpperFirst(name)}
	if !unicode.IsUpper(rune(name[0])) {
		l.Name = "launch" + UpperFirst(name)
	}
	first := sig.Params().At(0)
	switch (&compiler{}).ampName(first.Type()) {
	case "TiledIndex":
		l.Tiled = true
	case "Index":
	default:
		return nil, fmt.Errorf("kernel %s: first parameter is not amp.Index or amp.TiledIndex", name)
	}
	taken := map[string]bool{}
	for i := range sig.Params().Len() {
		taken[sig.Params().At(i).Name()] = true
	}
	fresh := func(n string) string {
		for taken[n] {
			n += "_"
		}
		taken[n] = true
		return n
	}
	l.On, l.Domain = fresh("on"), fresh("domain")
	l.Index = first.Name()
	if l.Index == "" || l.Index == "_" {
		l.Index = fresh("idx")
	}
	if tps := sig.TypeParams(); tps.Len() > 0 {
		var ps []string
		for i := range tps.Len() {
			tp := tps.At(i)
			ps = append(ps, tp.Obj().Name()+" "+types.TypeString(tp.Constraint(), qual))
			l.TypeNames = append(l.TypeNames, tp.Obj().Name())
		}
		l.TypeParams = "[" + strings.Join(ps, ", ") + "]"
		l.TypeArgs = "[" + strings.Join(l.TypeNames, ", ") + "]"
	}
	for i := 1; i < sig.Params().Len(); i++ {
		p := sig.Params().At(i)
		n := p.Name()
		if n == "" || n == "_" {
			n = fresh(fmt.Sprintf("arg%d", i))
		}
		l.Params = append(l.Params, n+" "+types.TypeString(p.Type(), qual))
		l.ArgNames = append(l.ArgNames, n)
	}
	return l, nil
}

// Decl is the launcher's declaration, up to its body.
func (l *Launcher) Decl() string {
	dom, _ := l.domainTypes()
	params := append([]string{l.On + " *amp.AcceleratorView", l.Domain + " " + dom}, l.Params...)
	return fmt.Sprintf("func %s%s(%s) error", l.Name, l.TypeParams, strings.Join(params, ", "))
}

// Method is the amp.AcceleratorView method the launcher calls.
func (l *Launcher) Method() string {
	if l.Tiled {
		return "LaunchTiled"
	}
	return "Launch"
}

// IndexType is the type of the CPU closure's parameter.
func (l *Launcher) IndexType() string {
	_, idx := l.domainTypes()
	return idx
}

func (l *Launcher) domainTypes() (domain, index string) {
	if l.Tiled {
		return "amp.TiledExtent", "amp.TiledIndex"
	}
	return "amp.Extent", "amp.Index"
}

// UpperFirst is s with its first letter upper-case: a kernel name made
// part of an exported identifier.
func UpperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
