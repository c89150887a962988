package npy

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the header dict: a parser for the subset of Python
// literals that .npy headers use, its validation, and its formatting.

// pyKind is the type of a parsed Python literal.
type pyKind int

const (
	pyStr pyKind = iota
	pyInt
	pyBool
	pyNone
	pyTuple
	pyList
	pyDict
)

// pyValue is a parsed Python literal.
type pyValue struct {
	kind  pyKind
	str   string    // pyStr
	num   int64     // pyInt
	bool  bool      // pyBool
	items []pyValue // pyTuple, pyList; for pyDict: key, value, key, value...
}

// maxNesting bounds the nesting of brackets in a header. Real headers nest
// at most a few levels (structured dtypes); the bound keeps the recursive
// parser's stack small on hostile input.
const maxNesting = 32

// headerParser parses a Python literal as ast.literal_eval would, restricted
// to: dicts, tuples, lists, str (with an optional u prefix and the escapes
// \\ \' \" \n \r \t), decimal ints with an optional sign, True, False and
// None.
type headerParser struct {
	s     string
	pos   int
	depth int
	// allowLong accepts Python 2 long literals such as 3L, which NumPy
	// still reads in version 1.0 and 2.0 headers.
	allowLong bool
}

// parseHeaderLiteral parses a complete header: one literal surrounded by
// optional whitespace.
func parseHeaderLiteral(s string, allowLong bool) (pyValue, error) {
	p := &headerParser{s: s, allowLong: allowLong}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return pyValue{}, err
	}
	p.skipSpace()
	if p.pos < len(p.s) {
		return pyValue{}, p.errorf("unexpected %s after the header dict", p.describe())
	}
	return v, nil
}

func (p *headerParser) errorf(format string, args ...any) error {
	return newError(ErrCorrupt, fmt.Sprintf("malformed header at offset %d: ", p.pos)+fmt.Sprintf(format, args...))
}

// describe names the input at the current position for error messages.
func (p *headerParser) describe() string {
	if p.pos >= len(p.s) {
		return "end of header"
	}
	r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *headerParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f':
			p.pos++
		default:
			return
		}
	}
}

func (p *headerParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *headerParser) value() (pyValue, error) {
	switch c := p.peek(); {
	case c == '{':
		return p.container('{', '}', pyDict)
	case c == '(':
		return p.container('(', ')', pyTuple)
	case c == '[':
		return p.container('[', ']', pyList)
	case c == '\'' || c == '"':
		return p.str()
	case (c == 'u' || c == 'U') && p.pos+1 < len(p.s) && (p.s[p.pos+1] == '\'' || p.s[p.pos+1] == '"'):
		p.pos++
		return p.str()
	case c == '-' || c == '+' || isDigit(c):
		return p.integer()
	case isIdentStart(c):
		start := p.pos
		for p.pos < len(p.s) && isIdentChar(p.s[p.pos]) {
			p.pos++
		}
		switch word := p.s[start:p.pos]; word {
		case "True":
			return pyValue{kind: pyBool, bool: true}, nil
		case "False":
			return pyValue{kind: pyBool, bool: false}, nil
		case "None":
			return pyValue{kind: pyNone}, nil
		default:
			p.pos = start
			return pyValue{}, p.errorf("unexpected name %s", quoteTrunc(word))
		}
	default:
		return pyValue{}, p.errorf("unexpected %s", p.describe())
	}
}

// container parses a dict, tuple or list. A parenthesized single value
// without a trailing comma is that value, as in Python.
func (p *headerParser) container(open, close byte, kind pyKind) (pyValue, error) {
	if p.depth >= maxNesting {
		return pyValue{}, p.errorf("nesting deeper than %d", maxNesting)
	}
	p.depth++
	defer func() { p.depth-- }()
	p.pos++ // open
	v := pyValue{kind: kind, items: []pyValue{}}
	for {
		p.skipSpace()
		if p.peek() == close {
			p.pos++
			return v, nil
		}
		item, err := p.value()
		if err != nil {
			return pyValue{}, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		if kind == pyDict {
			if p.peek() != ':' {
				return pyValue{}, p.errorf("expected ':' after dict key, found %s", p.describe())
			}
			p.pos++
			p.skipSpace()
			val, err := p.value()
			if err != nil {
				return pyValue{}, err
			}
			v.items = append(v.items, val)
			p.skipSpace()
		}
		switch p.peek() {
		case ',':
			p.pos++
		case close:
			p.pos++
			if kind == pyTuple && len(v.items) == 1 {
				return item, nil // (x) is just x
			}
			return v, nil
		default:
			return pyValue{}, p.errorf("expected ',' or '%c', found %s", close, p.describe())
		}
	}
}

// str parses a single- or double-quoted string literal.
func (p *headerParser) str() (pyValue, error) {
	quote := p.s[p.pos]
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			return pyValue{}, p.errorf("unterminated string")
		}
		c := p.s[p.pos]
		switch {
		case c == quote:
			p.pos++
			return pyValue{kind: pyStr, str: b.String()}, nil
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				p.pos++
				return pyValue{}, p.errorf("unterminated string")
			}
			var r byte
			switch p.s[p.pos+1] {
			case '\\', '\'', '"':
				r = p.s[p.pos+1]
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				return pyValue{}, p.errorf("unsupported escape sequence in string")
			}
			b.WriteByte(r)
			p.pos += 2
		case c < 0x20 || c == 0x7f:
			return pyValue{}, p.errorf("control character %s in string", p.describe())
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// integer parses a decimal integer literal with an optional sign.
func (p *headerParser) integer() (pyValue, error) {
	start := p.pos
	neg := false
	if c := p.peek(); c == '-' || c == '+' {
		neg = c == '-'
		p.pos++
		p.skipSpace() // Python allows "- 5"
	}
	digits := p.pos
	for p.pos < len(p.s) && isDigit(p.s[p.pos]) {
		p.pos++
	}
	lit := p.s[digits:p.pos]
	if lit == "" {
		return pyValue{}, p.errorf("expected a digit, found %s", p.describe())
	}
	if len(lit) > 1 && lit[0] == '0' && strings.Trim(lit, "0") != "" {
		p.pos = start
		return pyValue{}, p.errorf("integer with leading zeros")
	}
	if p.allowLong && p.peek() == 'L' {
		p.pos++
	}
	if c := p.peek(); isIdentChar(c) || c == '.' {
		return pyValue{}, p.errorf("invalid number literal (only decimal integers are allowed)")
	}
	u, err := strconv.ParseUint(lit, 10, 63)
	if err != nil {
		p.pos = start
		return pyValue{}, p.errorf("integer %s too large", quoteTrunc(lit))
	}
	n := int64(u)
	if neg {
		n = -n
	}
	return pyValue{kind: pyInt, num: n}, nil
}

func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// repr formats v as Python's repr would, for error messages.
func (v pyValue) repr() string {
	var b strings.Builder
	v.writeRepr(&b)
	return b.String()
}

func (v pyValue) writeRepr(b *strings.Builder) {
	switch v.kind {
	case pyStr:
		b.WriteString(pyQuote(v.str))
	case pyInt:
		b.WriteString(strconv.FormatInt(v.num, 10))
	case pyBool:
		if v.bool {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case pyNone:
		b.WriteString("None")
	case pyTuple, pyList:
		open, close := "(", ")"
		if v.kind == pyList {
			open, close = "[", "]"
		}
		b.WriteString(open)
		for i, it := range v.items {
			if i > 0 {
				b.WriteString(", ")
			}
			it.writeRepr(b)
		}
		if v.kind == pyTuple && len(v.items) == 1 {
			b.WriteByte(',')
		}
		b.WriteString(close)
	case pyDict:
		b.WriteByte('{')
		for i := 0; i+1 < len(v.items); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			v.items[i].writeRepr(b)
			b.WriteString(": ")
			v.items[i+1].writeRepr(b)
		}
		b.WriteByte('}')
	}
}

// pyQuote quotes s in single quotes, escaping what is not printable so the
// result is always one line.
func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError || !unicode.IsPrint(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// maxReprLen bounds how much of a header value an error message quotes.
const maxReprLen = 60

// trunc shortens s for an error message.
func trunc(s string) string {
	if len(s) <= maxReprLen {
		return s
	}
	cut := maxReprLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (truncated)"
}

// quoteTrunc quotes and shortens s for an error message.
func quoteTrunc(s string) string { return trunc(pyQuote(s)) }

// header is the validated content of a header dict.
type header struct {
	dtype   DType
	order   binary.ByteOrder
	fortran bool
	shape   []int
}

// parseHeader parses and validates the header dict of a file of the given
// major version.
func parseHeader(text string, major byte) (*header, error) {
	v, err := parseHeaderLiteral(text, major <= 2)
	if err != nil {
		return nil, err
	}
	if v.kind != pyDict {
		return nil, newError(ErrCorrupt, "header is not a dict: "+trunc(v.repr()))
	}
	var descr, fortran, shape *pyValue
	for i := 0; i+1 < len(v.items); i += 2 {
		k := v.items[i]
		if k.kind != pyStr {
			return nil, newError(ErrCorrupt, "header key is not a string: "+trunc(k.repr()))
		}
		var slot **pyValue
		switch k.str {
		case "descr":
			slot = &descr
		case "fortran_order":
			slot = &fortran
		case "shape":
			slot = &shape
		default:
			return nil, newError(ErrCorrupt, "unknown header key "+quoteTrunc(k.str))
		}
		if *slot != nil {
			return nil, newError(ErrCorrupt, "duplicate header key "+pyQuote(k.str))
		}
		*slot = &v.items[i+1]
	}
	for _, m := range []struct {
		v    *pyValue
		name string
	}{{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}} {
		if m.v == nil {
			return nil, newError(ErrCorrupt, "header has no '"+m.name+"' key")
		}
	}

	h := &header{}
	if h.dtype, h.order, err = parseDescr(*descr); err != nil {
		return nil, err
	}

	if fortran.kind != pyBool {
		return nil, newError(ErrCorrupt, "fortran_order is not True or False: "+trunc(fortran.repr()))
	}
	h.fortran = fortran.bool

	if shape.kind != pyTuple {
		return nil, newError(ErrCorrupt, "shape is not a tuple: "+trunc(shape.repr()))
	}
	if len(shape.items) > MaxDims {
		return nil, newError(ErrCorrupt,
			fmt.Sprintf("shape has %d dimensions, more than the maximum %d", len(shape.items), MaxDims))
	}
	h.shape = make([]int, len(shape.items))
	for i, d := range shape.items {
		if d.kind != pyInt {
			return nil, newError(ErrCorrupt, "shape is not a tuple of integers: "+trunc(shape.repr()))
		}
		if d.num < 0 {
			return nil, newError(ErrCorrupt, "negative dimension in shape "+trunc(shape.repr()))
		}
		if d.num > math.MaxInt {
			return nil, newError(ErrCorrupt, "dimension too large in shape "+trunc(shape.repr()))
		}
		h.shape[i] = int(d.num)
	}
	return h, nil
}

// parseDescr maps a descr value to an element type and byte order.
func parseDescr(v pyValue) (DType, binary.ByteOrder, error) {
	switch v.kind {
	case pyStr:
	case pyList, pyTuple:
		return 0, nil, newError(ErrUnsupportedDType,
			"unsupported dtype "+trunc(v.repr())+": structured and sub-array dtypes are not supported")
	default:
		return 0, nil, newError(ErrCorrupt, "descr is not a dtype descriptor: "+trunc(v.repr()))
	}
	s := v.str
	if isObjectDescr(s) {
		return 0, nil, newError(ErrObjectArray,
			"object array (descr "+quoteTrunc(s)+"): its data is a python pickle, which is never loaded")
	}
	unsupported := func() (DType, binary.ByteOrder, error) {
		return 0, nil, newError(ErrUnsupportedDType,
			"unsupported dtype "+quoteTrunc(s)+" (supported: '<f4', '<f8', '<i4', '<f2', in '<', '>' or '=' byte order)")
	}
	if len(s) != 3 {
		return unsupported()
	}
	var order binary.ByteOrder
	switch s[0] {
	case '<':
		order = binary.LittleEndian
	case '>':
		order = binary.BigEndian
	case '=':
		order = binary.NativeEndian
	default:
		return unsupported()
	}
	switch s[1:] {
	case "f4":
		return Float32, order, nil
	case "f8":
		return Float64, order, nil
	case "i4":
		return Int32, order, nil
	case "f2":
		return Float16, order, nil
	}
	return unsupported()
}

// isObjectDescr reports whether s describes NumPy's object dtype: 'O',
// optionally with a byte-order character and an item size ('|O', '|O8').
func isObjectDescr(s string) bool {
	if s != "" && strings.IndexByte("<>=|", s[0]) >= 0 {
		s = s[1:]
	}
	if s == "" || s[0] != 'O' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// arrayAlign is the alignment of the data offset in files Write produces.
const arrayAlign = 64

// growthAxisMaxDigits mirrors numpy.lib.format.GROWTH_AXIS_MAX_DIGITS:
// NumPy pads the header with spaces so that the length of the first axis
// can later be rewritten in place with up to this many digits.
const growthAxisMaxDigits = 21

// encodeHeader returns the preamble (magic, version, header length and
// header) that numpy.save writes for a C-ordered little-endian array of the
// given type and shape.
func encodeHeader(dt DType, shape []int) ([]byte, error) {
	var b strings.Builder
	b.WriteString("{'descr': '")
	b.WriteString(dt.descr())
	b.WriteString("', 'fortran_order': False, 'shape': ")
	b.WriteString(shapeString(shape))
	b.WriteString(", }")
	if len(shape) > 0 {
		if pad := growthAxisMaxDigits - len(strconv.Itoa(shape[0])); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
	}
	return wrapHeader(b.String())
}

// wrapHeader adds the magic string, version and header length to a header
// dict and pads it with spaces and a final '\n' so that the data starts at a
// multiple of arrayAlign, exactly as numpy.lib.format._wrap_header does
// (including its quirk of adding a full arrayAlign spaces rather than none
// when the header is already aligned). It uses format version 1.0 unless the
// header is too long for its 16-bit length field, then 2.0.
func wrapHeader(dict string) ([]byte, error) {
	for _, major := range []byte{1, 2} {
		lenSize := 2
		if major == 2 {
			lenSize = 4
		}
		hlen := len(dict) + 1 // with the final '\n'
		pad := arrayAlign - (len(magic)+2+lenSize+hlen)%arrayAlign
		total := hlen + pad
		if major == 1 && total > math.MaxUint16 {
			continue
		}
		if total > MaxHeaderLen {
			break
		}
		out := make([]byte, 0, len(magic)+2+lenSize+total)
		out = append(out, magic...)
		out = append(out, major, 0)
		if major == 1 {
			out = binary.LittleEndian.AppendUint16(out, uint16(total))
		} else {
			out = binary.LittleEndian.AppendUint32(out, uint32(total))
		}
		out = append(out, dict...)
		for range pad {
			out = append(out, ' ')
		}
		return append(out, '\n'), nil
	}
	return nil, newError(ErrInvalidArray, fmt.Sprintf("header of %d bytes is too long", len(dict)))
}
