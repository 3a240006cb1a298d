package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bad serve flags: one line, exit 2, nothing served.
func TestServeBadFlags(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if r := cli(t, dir, "run", "--objective", "synthetic/branin", "--iters", "1", "--db", db, "--study", "a"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"serve"}, []string{`required flag(s) "db" not set`}},
		{[]string{"serve", "--db", db, "--addr", "0.0.0.0:8080"}, []string{"--addr 0.0.0.0:8080 can be reached from other machines", "--token"}},
		{[]string{"serve", "--db", db, "--addr", ":8080"}, []string{"can be reached from other machines"}},
		{[]string{"serve", "--db", db, "--addr", "example.com:80"}, []string{"can be reached from other machines"}},
		{[]string{"serve", "--db", db, "--addr", "8080"}, []string{`bad --addr "8080": want host:port`}},
		{[]string{"serve", "--db", db, "--addr", "127.0.0.1:99999"}, []string{"port must be a number from 0 to 65535"}},
		{[]string{"serve", "--db", db, "--token", "short"}, []string{"bad --token: 5 characters, want 16 to 256"}},
		{[]string{"serve", "--db", db, "--token", "has space in the token"}, []string{"only printable ASCII"}},
		{[]string{"serve", "--db", filepath.Join(dir, "missing.db")}, []string{"missing.db"}},
		{[]string{"serve", "--db", db, "--log-level", "loud"}, []string{"bad --log-level"}},
	} {
		checkUsageError(t, cli(t, dir, c.args...), c.want)
	}
}

// serveProcess starts 'tesbo-host serve' with args on a free loopback port
// and returns the link it printed and the process.
func serveProcess(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address printed: %v", err)
	}
	go io.Copy(io.Discard, out)
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("printed %q", line)
	}
	return strings.TrimSpace(line[i:]), cmd
}

// httpGet GETs url with a client that keeps cookies, as a browser does.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// 'tesbo-host serve' shows the studies of a database another process
// wrote, requires the printed token link when given --token, and stops on
// SIGINT with exit 0.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if r := cli(t, dir, "run", "--objective", "synthetic/branin", "--iters", "2", "--db", db, "--study", "synthetic/branin-e2e"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	link, cmd := serveProcess(t, "--db", db)
	if code, body := httpGet(t, link); code != 200 || !strings.Contains(body, "synthetic/branin-e2e") || !strings.Contains(body, "finished") {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body := httpGet(t, link+"api/trials?name=synthetic/branin-e2e&format=csv"); code != 200 || strings.Count(body, "\n") != 5 {
		t.Fatalf("csv: %d %q", code, body)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after SIGINT: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}

	const tok = "0123456789abcdef0123"
	link, _ = serveProcess(t, "--db", db, "--token", tok)
	if !strings.HasSuffix(link, "/?token="+tok) {
		t.Fatalf("link %q", link)
	}
	base := strings.TrimSuffix(link, "?token="+tok)
	if code, _ := httpGet(t, base+"api/studies"); code != 401 {
		t.Fatalf("without the token: %d", code)
	}
	if code, body := httpGet(t, link); code != 200 || !strings.Contains(body, "synthetic/branin-e2e") {
		t.Fatalf("with the link: %d %s", code, body)
	}
}

// serve reads PostgreSQL databases as well as SQLite files, and its help
// says so (it once called --db "a SQLite file").
func TestServeHelp(t *testing.T) {
	r := cli(t, t.TempDir(), "serve", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"--db PATH|URL", "SQLite path or postgres:// URL"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// The printed link names the machine when serve listens on every
// interface: http://[::]:8080/ is no address to open from another machine.
func TestServeLink(t *testing.T) {
	host := func() (string, error) { return "box", nil }
	for _, c := range []struct {
		addr  *net.TCPAddr
		token string
		want  string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "", "http://127.0.0.1:8080/"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "t0k", "http://box:8080/?token=t0k"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 80}, "", "http://box:80/"},
		{&net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 8080}, "a b", "http://10.1.2.3:8080/?token=a+b"},
	} {
		if got := serveLink(c.addr, c.token, host); got != c.want {
			t.Errorf("serveLink(%v, %q) = %q, want %q", c.addr, c.token, got, c.want)
		}
	}
	noName := func() (string, error) { return "", errors.New("no hostname") }
	if got := serveLink(&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "", noName); got != "http://[::]:8080/" {
		t.Errorf("without a hostname: %q", got)
	}
}
