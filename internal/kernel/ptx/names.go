package ptx

import (
	"fmt"
	"strconv"
	"strings"
)

// reserved are PTX's instruction keywords (PTX ISA 9.1, section 4.3.2,
// Table 2): reserved tokens, so no entry may be named after one.
var reserved = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`activemask add addc alloca and applypriority atom bar barrier bfe bfi
		bfind bmsk bra brev brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy
		cvt cvta discard div dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep
		istypep ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov
		movmatrix mul mul24 multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red
		redux rem ret rsqrt sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore
		stacksave stmatrix sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap
		txq vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2
		vmin4 vote vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor WARP_SZ`) {
		reserved[k] = true
	}
}

// isIdent reports whether s is a PTX identifier (PTX ISA 4.4): a letter
// then letters, digits, '_' or '$'; or '_' or '$' then at least one more.
// Names beginning with '%' are identifiers too, but they are where
// registers and special registers live, so an entry may not take one.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		switch {
		case letter:
		case c >= '0' && c <= '9' || c == '_' || c == '$':
			if i == 0 && (c >= '0' && c <= '9' || len(s) == 1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// maxNamePart bounds the part of a source name kept in a symbol: the
// symbol only has to be recognisable to a reader.
const maxNamePart = 48

// sanitize keeps the characters of a source name that PTX identifiers
// allow, turning the others into '_'.
func sanitize(name string) string {
	var sb strings.Builder
	for i := 0; i < len(name) && sb.Len() < maxNamePart; i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' {
			sb.WriteByte(c)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// symbol names a parameter ('p'), shared array ('s') or local array ('l')
// of kernel fi: kind, the kernel's and the item's indices, then the
// sanitized source name. The indices make it unique in the module (the
// prefix parses back to kind, kernel and index, as neither index holds a
// '_'), and the leading letter and '_' keep it off every keyword.
func symbol(kind byte, fi, i int, name string) string {
	s := string(kind) + strconv.Itoa(fi) + "_" + strconv.Itoa(i)
	if n := sanitize(name); n != "" {
		s += "_" + n
	}
	return s
}

// symbols checks the module-scope names: the entries'.
type symbols struct{ entries map[string]bool }

func newSymbols() *symbols { return &symbols{entries: map[string]bool{}} }

// entry admits a kernel's name, which must be usable as it is: it is what
// the runtime looks the kernel up by (cuModuleGetFunction).
func (s *symbols) entry(name string) error {
	switch {
	case !isIdent(name):
		return fmt.Errorf("ptx: kernel name %q is not a PTX identifier", name)
	case reserved[name]:
		return fmt.Errorf("ptx: kernel name %q is a PTX keyword", name)
	case s.entries[name]:
		return fmt.Errorf("ptx: two kernels are named %q", name)
	case generated(name):
		return fmt.Errorf("ptx: kernel name %q has the form of a generated symbol", name)
	}
	s.entries[name] = true
	return nil
}

// generated reports whether name could be a symbol(kind, fi, i, ...):
// kernels may not take those, so that the two never meet.
func generated(name string) bool {
	if len(name) < 4 || !strings.ContainsRune("psl", rune(name[0])) {
		return false
	}
	rest := name[1:]
	for k := 0; k < 2; k++ {
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 {
			return false
		}
		rest = rest[j:]
		if k == 0 {
			if rest == "" || rest[0] != '_' {
				return false
			}
			rest = rest[1:]
		}
	}
	return rest == "" || rest[0] == '_'
}
