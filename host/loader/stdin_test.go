package loader

import (
	"bufio"
	"context"
	"os"
	"testing"
)

// TestRestrictedScriptStdin: a restricted script reading its standard input
// (fmt.Scanln) gets EOF, and what the host has on its stdin stays there.
func TestRestrictedScriptStdin(t *testing.T) {
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := wr.WriteString("secret\n"); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	saved := os.Stdin
	os.Stdin = rd
	defer func() { os.Stdin = saved }()

	s, err := CompileScript("testdata/scripts/stdin.go", false)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Evaluate(context.Background(), []float64{0.5})
	if err == nil || err.Error() != "EOF" {
		t.Fatalf("Scanln in a restricted script: %v, %v; want the error EOF", v, err)
	}
	os.Stdin = saved
	line, err := bufio.NewReader(rd).ReadString('\n')
	if err != nil || line != "secret\n" {
		t.Fatalf("the host's stdin after the script ran: %q, %v; want it untouched", line, err)
	}
}
