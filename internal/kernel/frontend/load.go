package frontend

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"

	"github.com/goamp/goamp/internal/kernel/ir"
)

// Directive is the comment line that marks a function as a kernel.
const Directive = "//goamp:kernel"

// AMPPath is the import path of package amp, whose types and functions
// kernels use and the compiler knows.
const AMPPath = "github.com/goamp/goamp/amp"

// Package is a Go package's kernels, compiled.
type Package struct {
	Name    string // the package clause's name
	Path    string
	Dir     string
	Fset    *token.FileSet
	Kernels []*Kernel
}

// Kernel is one Go function marked with Directive, compiled once for each
// rank of compute domain it can be launched over (and, for a generic
// function, once for each combination of its type arguments).
type Kernel struct {
	Package  string       // the package's name
	GoName   string       // the function's name, "Transpose"
	Name     string       // with type arguments, "tiledMatMul[float32]"
	TypeArgs []types.Type // for an instance of a generic function
	Pos      token.Position
	Tiled    bool // the first parameter is an amp.TiledIndex (else an amp.Index)
	// Shuffles reports that the kernel exchanges values within warps.
	Shuffles bool
	// Tile is the tile shape the directive fixed ("tile=16,16"), dimension
	// 0 first; nil for a kernel that takes any.
	Tile []int
	// Blocks is how many tiles the directive asks an SM to hold at once
	// ("blocks=2"); 0 leaves it to the GPU's compiler.
	Blocks int
	// Regs caps a thread's registers ("regs=32"); 0 leaves it to the
	// GPU's compiler.
	Regs  int
	Index string // the first parameter's name
	Args  []*Arg // the other parameters
	// Funcs[r] is the kernel for a domain of rank r (Funcs[0] is nil).
	Funcs [ir.MaxRank + 1]*ir.Func
	// Small[r], set by the generator, is Funcs[r] compiled for small
	// indices (ir.Func.SmallIndices), where it differs.
	Small [ir.MaxRank + 1]*ir.Func
	// Sig is the Go signature, for the generated launcher.
	Sig *types.Signature
}

// Arg is a kernel parameter after the index.
type Arg struct {
	Name   string
	Type   types.Type // with type arguments substituted
	View   bool       // an *amp.ArrayView[T]; Elem is T
	Elem   ir.Type    // the view's element type, or the scalar's type
	Read   bool       // views: some access reads it
	Write  bool       // views: some access writes it
	IsBool bool       // a bool scalar, passed as u32
	// Ranks[r] is the rank of the indices the kernel for a rank-r domain
	// uses on this view (0: it indexes it not at all); the launcher checks
	// the view's rank against it.
	Ranks [ir.MaxRank + 1]int
	// MinRank is the least rank the view may have: one more than the
	// highest dimension of its extent the kernel reads by a constant.
	MinRank int
}

// Load compiles the kernels of the package in dir (the package named by
// pattern, "." for dir's own). Constructs outside the kernel subset come
// back as an ErrorList, every one with its position.
func Load(dir, pattern string) (*Package, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	name, err := packageName(absDir)
	if err != nil {
		return nil, err
	}
	// The generated file is left out (it may be stale, or refer to kernels
	// that changed); if the package calls the launchers it declares, a
	// stub declaring them with the kernels' current signatures stands in.
	genPath := filepath.Join(absDir, GeneratedFile)
	overlay := map[string][]byte{genPath: []byte("package " + name + "\n")}
	p, err := loadPackage(absDir, pattern, overlay)
	if err != nil {
		return nil, err
	}
	if len(packageErrors(p)) > 0 {
		if stub := stubLaunchers(p); stub != nil {
			overlay[genPath] = stub
			if p, err = loadPackage(absDir, pattern, overlay); err != nil {
				return nil, err
			}
		}
	}
	if errs := packageErrors(p); len(errs) > 0 {
		return nil, fmt.Errorf("loading %s:\n%s", dir, strings.Join(errs, "\n"))
	}
	prog := ssa.NewProgram(p.Fset, ssa.BuilderMode(0))
	// Dependencies are created from their type information only: kernels
	// call functions of their own package, amp's and math's, and the
	// compiler knows the last two by name.
	created := map[*types.Package]bool{}
	var create func(t *types.Package)
	create = func(t *types.Package) {
		if created[t] {
			return
		}
		created[t] = true
		for _, imp := range t.Imports() {
			create(imp)
		}
		if t != p.Types {
			prog.CreatePackage(t, nil, nil, true)
		}
	}
	create(p.Types)
	sp := prog.CreatePackage(p.Types, p.Syntax, p.TypesInfo, false)
	sp.Build()

	out := &Package{Name: p.Name, Path: p.PkgPath, Dir: dir, Fset: p.Fset}
	if len(p.GoFiles) > 0 {
		out.Dir = dirOf(p.GoFiles[0])
	}
	var errs ErrorList
	for _, file := range p.Syntax {
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || !hasDirective(fd.Doc) {
				continue
			}
			pos := p.Fset.Position(fd.Pos())
			if fd.Recv != nil {
				errs = append(errs, &Error{pos, fmt.Sprintf("kernel %s is a method; make it a top-level function", fd.Name.Name)})
				continue
			}
			fn := sp.Func(fd.Name.Name)
			if fn == nil {
				errs = append(errs, &Error{pos, fmt.Sprintf("kernel %s: no SSA function (is it a function declaration?)", fd.Name.Name)})
				continue
			}
			dir, derr := parseDirective(fd.Doc, p.Fset)
			if derr != nil {
				errs = append(errs, derr)
				continue
			}
			ks, kerrs := compileKernel(out, fn, fd, dir)
			errs = append(errs, kerrs...)
			out.Kernels = append(out.Kernels, ks...)
		}
	}
	// Any directive on something that is not a function is a mistake worth saying.
	for _, file := range p.Syntax {
		for _, cg := range file.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, Directive) && !attachedToFunc(file, cg) {
					errs = append(errs, &Error{p.Fset.Position(c.Pos()), Directive + " must be in the doc comment of a top-level function"})
				}
			}
		}
	}
	errs = dedupe(errs)
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return "."
}

// directive is what a kernel's directive says.
type directive struct {
	tile   []int // tile=T0[,T1[,T2]]: the tile shape the kernel is compiled for
	blocks int   // blocks=B: how many tiles an SM should hold at once (0: the back end's choice)
	regs   int   // regs=R: the most registers a thread may use (0: the back end's choice)
	// regsFor overrides regs for the instances of a generic kernel with
	// these type arguments ("regs[float32]=48"): a float64 takes two
	// registers where a float32 takes one, and the best cap differs.
	regsFor map[string]int
}

// parseDirective reads the directive's options: "tile=T0[,T1[,T2]]" fixes
// the tile shape the kernel is compiled for; "blocks=B" (with tile=)
// asks the GPU's compiler to fit B tiles on a multiprocessor at once, as
// CUDA C's __launch_bounds__(threads, B) does: it limits the registers a
// thread may use to what B tiles leave it; "regs=R" caps a thread's
// registers at R, as CUDA C's __maxnreg__(R) does, and "regs[T]=R" does
// for the instance of a generic kernel with type argument T (several
// separated by commas, as in the instance's name).
func parseDirective(cg *ast.CommentGroup, fset *token.FileSet) (directive, *Error) {
	var d directive
	for _, c := range cg.List {
		if c.Text != Directive && !strings.HasPrefix(c.Text, Directive+" ") {
			continue
		}
		pos := fset.Position(c.Pos())
		var tile []int
		for _, opt := range strings.Fields(strings.TrimPrefix(c.Text, Directive)) {
			if val, ok := strings.CutPrefix(opt, "regs="); ok {
				n, err := strconv.Atoi(val)
				if err != nil || n < 16 || n > 255 {
					return d, &Error{pos, fmt.Sprintf("regs=%s in %s: want 16 to 255 registers a thread", val, Directive)}
				}
				d.regs = n
				continue
			}
			if rest, ok := strings.CutPrefix(opt, "regs["); ok {
				targs, val, found := strings.Cut(rest, "]=")
				n, err := strconv.Atoi(val)
				if !found || targs == "" || err != nil || n < 16 || n > 255 {
					return d, &Error{pos, fmt.Sprintf("%s in %s: want regs[T]=R, T a type argument, R 16 to 255 registers a thread", opt, Directive)}
				}
				if d.regsFor == nil {
					d.regsFor = map[string]int{}
				}
				d.regsFor[targs] = n
				continue
			}
			if val, ok := strings.CutPrefix(opt, "blocks="); ok {
				n, err := strconv.Atoi(val)
				if err != nil || n < 1 || n > 32 {
					return d, &Error{pos, fmt.Sprintf("blocks=%s in %s: want 1 to 32 tiles a multiprocessor", val, Directive)}
				}
				d.blocks = n
				continue
			}
			val, ok := strings.CutPrefix(opt, "tile=")
			if !ok {
				return d, &Error{pos, fmt.Sprintf("unknown option %q in %s (the options are tile=T0[,T1[,T2]], blocks=B, regs=R and regs[T]=R)", opt, Directive)}
			}
			threads := 1
			for _, f := range strings.Split(val, ",") {
				n, err := strconv.Atoi(f)
				if err != nil || n < 1 || n > 1024 {
					return d, &Error{pos, fmt.Sprintf("tile size %q in %s: want 1 to 1024", f, Directive)}
				}
				tile = append(tile, n)
				threads *= n
			}
			if len(tile) > ir.MaxRank || threads > 1024 {
				return d, &Error{pos, fmt.Sprintf("tile %s in %s: at most %d sizes and 1024 threads a tile", val, Directive, ir.MaxRank)}
			}
		}
		d.tile = tile
		if d.blocks > 0 && tile == nil {
			return d, &Error{pos, fmt.Sprintf("blocks= in %s needs tile=: the GPU's compiler plans registers for a known tile size", Directive)}
		}
		return d, nil
	}
	return d, nil
}

func hasDirective(cg *ast.CommentGroup) bool {
	if cg == nil {
		return false
	}
	for _, c := range cg.List {
		if c.Text == Directive || strings.HasPrefix(c.Text, Directive+" ") {
			return true
		}
	}
	return false
}

func attachedToFunc(file *ast.File, cg *ast.CommentGroup) bool {
	for _, d := range file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc == cg {
			return true
		}
	}
	return false
}

func loadPackage(dir, pattern string, overlay map[string][]byte) (*packages.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps,
		Dir:     dir,
		Overlay: overlay,
	}
	pkgs, err := packages.Load(cfg, pattern)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", dir, err)
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("loading %s: %d packages, want 1", dir, len(pkgs))
	}
	return pkgs[0], nil
}

func packageErrors(p *packages.Package) []string {
	var errs []string
	packages.Visit([]*packages.Package{p}, nil, func(q *packages.Package) {
		for _, e := range q.Errors {
			errs = append(errs, e.Error())
		}
	})
	return errs
}

// packageName reads the package clause of the first Go file in dir.
func packageName(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || n == GeneratedFile {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return f.Name.Name, nil
	}
	return "", fmt.Errorf("no Go files in %s", dir)
}

// stubLaunchers declares the launchers of p's kernels, with bodies that
// only panic, so that the rest of the package type-checks before the
// generated file exists; nil if p has no kernels with usable signatures.
func stubLaunchers(p *packages.Package) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport %q\n\n", p.Name, AMPPath)
	n := 0
	qual := func(q *types.Package) string {
		if q.Path() == p.PkgPath {
			return ""
		}
		return q.Name()
	}
	for _, file := range p.Syntax {
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || !hasDirective(fd.Doc) || fd.Recv != nil {
				continue
			}
			obj, ok := p.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			l, err := NewLauncher(fd.Name.Name, obj.Type().(*types.Signature), qual)
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "%s { panic(\"goampgen: stub\") }\n\n", l.Decl())
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return []byte(b.String())
}

// dedupe drops repeated errors (a kernel is compiled once a rank and a type
// argument, and each compilation finds the same refusals) and sorts them.
func dedupe(errs ErrorList) ErrorList {
	seen := map[string]bool{}
	var out ErrorList
	for _, e := range errs {
		k := e.Error()
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		if a.Pos.Filename != b.Pos.Filename {
			return strings.Compare(a.Pos.Filename, b.Pos.Filename)
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line - b.Pos.Line
		}
		return a.Pos.Column - b.Pos.Column
	})
	return out
}

// instances lists the type-argument combinations a generic kernel is
// compiled for: every type in each type parameter's constraint, which must
// be a union of scalar types (amp.Element, or one of the user's own).
func instances(fn *ssa.Function, pos token.Position) ([][]types.Type, *Error) {
	tps := fn.TypeParams()
	if tps.Len() == 0 {
		return [][]types.Type{nil}, nil
	}
	combos := [][]types.Type{nil}
	for i := range tps.Len() {
		tp := tps.At(i)
		iface, _ := tp.Constraint().Underlying().(*types.Interface)
		var set []types.Type
		if iface != nil {
			for j := range iface.NumEmbeddeds() {
				switch e := iface.EmbeddedType(j).(type) {
				case *types.Union:
					for k := range e.Len() {
						set = append(set, e.Term(k).Type())
					}
				default:
					if _, ok := e.Underlying().(*types.Basic); ok {
						set = append(set, e)
					}
				}
			}
		}
		if len(set) == 0 {
			return nil, &Error{pos, fmt.Sprintf("type parameter %s of a kernel needs a constraint listing its types (such as amp.Element)", tp.Obj().Name())}
		}
		var next [][]types.Type
		for _, c := range combos {
			for _, t := range set {
				next = append(next, append(slices.Clone(c), t))
			}
		}
		combos = next
	}
	return combos, nil
}
