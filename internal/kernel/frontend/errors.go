package frontend

import (
	"fmt"
	"go/token"
)

// Error is a construct the GPU cannot run, found at generate time: where it
// is and one sentence saying what it is and what to do instead.
type Error struct {
	Pos token.Position
	Msg string
}

func (e *Error) Error() string {
	if !e.Pos.IsValid() {
		return e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Pos.Filename, e.Pos.Line, e.Pos.Column, e.Msg)
}

// ErrorList is every Error of one run, in source order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	s := l[0].Error()
	for _, e := range l[1:] {
		s += "\n" + e.Error()
	}
	return s
}
