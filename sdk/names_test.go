package sdk

import (
	"errors"
	"strings"
	"testing"
)

// TestNamesBounded: an objective, parameter or choice name that is too
// long or holds a control character (ESC sequences, newlines, tabs) or
// invalid UTF-8 is refused with a short error naming what is wrong; names
// of MaxNameBytes bytes and non-ASCII names are fine.
func TestNamesBounded(t *testing.T) {
	ok := strings.Repeat("é", MaxNameBytes/2)
	long := strings.Repeat("x", 3<<20)
	fl := func(name string) Param { return Param{Name: name, Kind: Float, Low: 0, High: 1} }
	cat := func(choices ...string) Param { return Param{Name: "c", Kind: Categorical, Choices: choices} }
	for _, c := range []struct {
		info Info
		want string
	}{
		{Info{Name: long, Params: []Param{fl("x")}}, "objective name \"xxx"},
		{Info{Name: "o\x1b[31m", Params: []Param{fl("x")}}, "control character"},
		{Info{Name: "o", Params: []Param{fl(long)}}, "name of 3145728 bytes, at most 256"},
		{Info{Name: "o", Params: []Param{fl("x\x1b]0;title\x07")}}, "control character"},
		{Info{Name: "o", Params: []Param{fl("a\tb")}}, "control character"},
		{Info{Name: "o", Params: []Param{fl("bad\xff")}}, "not valid UTF-8"},
		{Info{Name: "o", Params: []Param{cat("red", "\x1b[2Jgreen")}}, "choice 1"},
		{Info{Name: "o", Params: []Param{cat("red", long)}}, "at most 256"},
		{Info{Name: "o", Params: []Param{cat("red", "\u009bgreen")}}, "control character"},
	} {
		err := c.info.Validate()
		if err == nil || !errors.Is(err, ErrBadSpace) || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 300 {
			t.Errorf("%.40q: got %v, want an ErrBadSpace of at most 300 bytes saying %q", c.info.Params[0].Name, err, c.want)
		}
	}
	good := Info{Name: ok, Params: []Param{fl(ok), fl("größe ≤ 3"), cat("rot", ok, "=HYPERLINK(x)")}}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid names refused: %v", err)
	}
}
