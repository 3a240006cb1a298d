package loader

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/testenv"
)

func TestRestrictedScripts(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{
		"exec.go": "testdata/scripts/exec.go",
		"net.go":  "testdata/scripts/net.go",
	})
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	list := r.List(ctx)
	if len(list) != 2 {
		t.Fatalf("List = %+v", list)
	}
	for _, p := range list {
		imp := map[string]string{"exec": `"os/exec"`, "net": `"net"`}[p.Name]
		pos := map[string]string{"exec": "exec.go:5:2", "net": "net.go:4:2"}[p.Name]
		wantErr(t, p.Err, p.Name, ErrRestricted, imp, "--unrestricted", pos)
	}
	if _, err := r.Objective(ctx, "exec"); !errors.Is(err, ErrRestricted) {
		t.Fatalf("Objective(exec) err = %v", err)
	}

	// --unrestricted lifts it: the script runs `true` through os/exec.
	r2 := open(t, dir, Options{Unrestricted: true})
	o, err := r2.Objective(ctx, "exec")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := o.Evaluate(ctx, []float64{0.5}); err != nil || v != 0 {
		t.Fatalf("unrestricted exec script: %v, %v", v, err)
	}
}

func TestCheckImport(t *testing.T) {
	for _, tc := range []struct {
		path         string
		unrestricted bool
		want         error
	}{
		{"math", false, nil},
		{"math/rand/v2", false, nil},
		{"github.com/tesbo/tesbo/sdk", false, nil},
		{"os/exec", false, ErrRestricted},
		{"os", false, ErrRestricted},
		{"net/http", false, ErrRestricted},
		{"unsafe", false, ErrRestricted},
		{"syscall", false, ErrRestricted},
		{"reflect", false, ErrRestricted},
		{"os/exec", true, nil},
		{"unsafe", true, nil},
		{"github.com/evil/pkg", true, ErrScript},
	} {
		err := checkImport(tc.path, tc.unrestricted)
		if (tc.want == nil) != (err == nil) || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("checkImport(%q, %v) = %v, want %v", tc.path, tc.unrestricted, err, tc.want)
		}
	}
	// Every allowlisted package exists in the interpreter's standard library.
	for _, p := range AllowedScriptImports {
		if !isStdlib(p) {
			t.Errorf("allowlisted %q is unknown to Yaegi", p)
		}
	}
}

func TestChecksum(t *testing.T) {
	dir := pluginsDir(t, []string{"objective"}, map[string]string{"quad.go": "testdata/scripts/objective.go"})
	ctx := ctxT(t)
	good := map[string]string{}
	for _, p := range open(t, dir, Options{}).List(ctx) {
		good[p.Name] = p.SHA256
	}
	bad := strings.Repeat("ab", 32)
	for _, name := range []string{"objective", "quad"} {
		r := open(t, dir, Options{Checksums: map[string]string{name: bad}})
		_, err := r.Objective(ctx, name)
		wantErr(t, err, name, ErrChecksum, "refusing")
		r = open(t, dir, Options{Checksums: map[string]string{name: strings.ToUpper(good[name])}})
		if _, err := r.Objective(ctx, name); err != nil {
			t.Fatalf("%s with matching checksum: %v", name, err)
		}
	}
	r := open(t, dir, Options{Checksums: map[string]string{"objective": "xyz"}})
	_, err := r.Objective(ctx, "objective")
	wantErr(t, err, "objective", ErrChecksum, "64 hex digits")
}

func TestEnvDenyList(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/root", "GITHUB_TOKEN=x", "AWS_SECRET_ACCESS_KEY=y", "db_password=z",
		"OPENAI_API_KEY=k", "SSH_AUTH_SOCK=/s", "CUDA_VISIBLE_DEVICES=0", "TESBO_FOO=1"}
	got := strings.Join(pluginEnv(env, DefaultEnvDeny, nil), " ")
	if got != "PATH=/bin HOME=/root CUDA_VISIBLE_DEVICES=0 TESBO_FOO=1" {
		t.Fatalf("default deny: %s", got)
	}
	got = strings.Join(pluginEnv(env, DefaultEnvDeny, []string{"GITHUB_TOKEN"}), " ")
	if !strings.Contains(got, "GITHUB_TOKEN=x") {
		t.Fatalf("allow: %s", got)
	}
	if got := pluginEnv(env, []string{}, nil); len(got) != len(env) {
		t.Fatalf("empty deny list: %v", got)
	}
	if got := strings.Join(pluginEnv(env, []string{"TESBO_*"}, nil), " "); strings.Contains(got, "TESBO_FOO") || !strings.Contains(got, "GITHUB_TOKEN") {
		t.Fatalf("custom deny: %s", got)
	}
	// Secrets the first list let through (probe M), and their neighbours
	// that are no secrets.
	more := []string{"MYSQL_PWD=s1", "DB_PWD=s2", "REDIS_URL=redis://:s3@h", "MONGODB_URI=mongodb://u:s4@h/db",
		"CI_JOB_JWT=s5", "HTTPS_PROXY=http://u:s7@proxy:3128", "SESSION_COOKIE=s8", "SLACK_WEBHOOK_URL=https://hooks.slack.com/s9",
		"PWD=/work", "OLDPWD=/", "HTTP_PROXY=http://proxy:3128", "DOCS_URL=https://user@example.com/x"}
	got = strings.Join(pluginEnv(more, DefaultEnvDeny, nil), " ")
	if want := "PWD=/work OLDPWD=/ HTTP_PROXY=http://proxy:3128 DOCS_URL=https://user@example.com/x"; got != want {
		t.Fatalf("default deny: %s, want %s", got, want)
	}
	if got := strings.Join(pluginEnv(more, DefaultEnvDeny, []string{"REDIS_URL"}), " "); !strings.Contains(got, "REDIS_URL=") {
		t.Fatalf("allow a URL with a password: %s", got)
	}
}

// TestPluginEnvironment checks end to end that a secret in the host's
// environment does not reach a plugin while ordinary variables do.
func TestPluginEnvironment(t *testing.T) {
	t.Setenv("TESBO_TEST_API_TOKEN", "s3cret")
	t.Setenv("TESBO_TEST_PLAIN", "visible")
	r := open(t, pluginsDir(t, nil, map[string]string{"env.go": "testdata/scripts/env.go"}), Options{Unrestricted: true})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "env")
	if err != nil {
		t.Fatal(err)
	}
	// env.go returns 1 per variable it sees: PLAIN (x=0) and TOKEN (x=1).
	if v, err := o.Evaluate(ctx, []float64{0}); err != nil || v != 1 {
		t.Fatalf("plain variable: %v, %v; want visible", v, err)
	}
	if v, err := o.Evaluate(ctx, []float64{1}); err != nil || v != 0 {
		t.Fatalf("token variable: %v, %v; want withheld", v, err)
	}
}

// TestEnvDenyPatterns: the default deny-list withholds secrets by the
// words their names contain, in any case, and passes look-alikes (PATH
// holds PAT, but not as a word).
func TestEnvDenyPatterns(t *testing.T) {
	deny := []string{"DB_PASS", "db_pass", "STRIPE_KEY", "GITHUB_PAT", "PAT", "PAT_TOKEN", "MY_PAT_FILE",
		"PGPASSWORD", "PGPASSFILE", "PGHOST", "PGSERVICE", "SLACK_WEBHOOK_SECRET", "Npm_Token", "AUTH_HEADER",
		"XAUTHORITY", "SSH_AUTH_SOCK", "GOOGLE_APPLICATION_CREDENTIALS", "SENTRY_DSN", "DATABASE_URL",
		"REDIS_PASSWD", "SIGNING_KEYFILE", "AWS_PROFILE"}
	pass := []string{"PATH", "GOPATH", "PATCH_LEVEL", "SPATIAL_DIR", "HOME", "GOCACHE", "CUDA_VISIBLE_DEVICES",
		"TESBO_PYTHON", "LANG", "OMP_NUM_THREADS", "GOMEMLIMIT", "TMPDIR"}
	var env []string
	for _, n := range append(append([]string{}, deny...), pass...) {
		env = append(env, n+"=v")
	}
	got := pluginEnv(env, DefaultEnvDeny, nil)
	var want []string
	for _, n := range pass {
		want = append(want, n+"=v")
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("passed %v\nwant   %v", got, want)
	}
}

// TestChecksumNames: a pin may name a plugin entry or an objective it serves
// in the form --objective takes (ENTRY/NAME); a wrong checksum under either
// name refuses the plugin before it runs, a right one lets it run, and a
// name that matches nothing is an error, not a warning.
func TestChecksumNames(t *testing.T) {
	dir := pluginsDir(t, []string{"multi"}, nil)
	ctx := ctxT(t)
	good := ""
	for _, p := range open(t, dir, Options{}).List(ctx) {
		good = p.SHA256
	}
	bad := strings.Repeat("0", 64)

	r := open(t, dir, Options{Checksums: map[string]string{"multi/up": bad}})
	wantErr(t, r.VerifyChecksums(), "multi", ErrChecksum, "refusing", bad)
	_, err := r.Objective(ctx, "multi/up")
	wantErr(t, err, "multi", ErrChecksum, "refusing")

	r = open(t, dir, Options{Checksums: map[string]string{"multi/down": good}})
	if err := r.VerifyChecksums(); err != nil {
		t.Fatalf("matching pin by objective name: %v", err)
	}
	if _, err := r.Objective(ctx, "multi/down"); err != nil {
		t.Fatalf("matching pin by objective name: %v", err)
	}

	for _, name := range []string{"nope", "nope/branin"} {
		r = open(t, dir, Options{Checksums: map[string]string{name: good}})
		wantErr(t, r.VerifyChecksums(), name, ErrChecksum, "no plugin")
		_, err = r.Objective(ctx, "multi/up")
		wantErr(t, err, name, ErrChecksum, "no plugin")
	}

	r = open(t, dir, Options{Checksums: map[string]string{"multi": good, "multi/up": bad}})
	wantErr(t, r.VerifyChecksums(), "multi", ErrChecksum, "conflicting")
}

// A plugin process restarted after a crash that describes its objective
// differently (a binary rebuilt, a script edited mid-run) is refused with
// ErrChanged, whose error stops the run (StopsRun), rather than sent
// points of the old space.
func TestRestartedPluginChangedInfo(t *testing.T) {
	dir := t.TempDir()
	dimFile := filepath.Join(dir, "dim")
	if err := os.WriteFile(dimFile, []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "grow.go")
	src := `package grow

import (
	"context"
	"os"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	b, _ := os.ReadFile(` + strconv.Quote(dimFile) + `)
	ps := []sdk.Param{{Name: "x", Low: 0, High: 1}}
	if string(b) == "2" {
		ps = append(ps, sdk.Param{Name: "y", Low: 0, High: 1})
	}
	return sdk.Info{Name: "grow", Params: ps}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	if x[0] > 0.5 {
		os.Exit(3)
	}
	return x[0], nil
}
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := open(t, pluginsDir(t, nil, map[string]string{"grow.go": script}), Options{Unrestricted: true})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "grow")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := o.Evaluate(ctx, []float64{0.25}); err != nil || v != 0.25 {
		t.Fatalf("first evaluation: %v, %v", v, err)
	}
	if err := os.WriteFile(dimFile, []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Evaluate(ctx, []float64{0.75}); !errors.Is(err, ErrExited) {
		t.Fatalf("the crashing evaluation: %v, want ErrExited", err)
	}
	_, err = o.Evaluate(ctx, []float64{0.25})
	var le *Error
	if !errors.Is(err, ErrChanged) || !errors.As(err, &le) || !le.StopsRun() || !strings.Contains(err.Error(), "1 parameters, now 2") {
		t.Fatalf("after the restart: %v, want ErrChanged naming the parameters, stopping the run", err)
	}
}

// An objective name that two plugins serve, neither named after it, is
// ambiguous: Objective refuses it naming both, and List marks both rows.
// A plugin named after it (or its prefix) takes it.
func TestSharedObjectiveName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"m1", "m2"} {
		if err := os.Symlink(filepath.Join(testBin, "multi"), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	if _, err := r.Objective(ctx, "multi/up"); !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "m1 and") {
		t.Fatalf("Objective: %v, want ErrDuplicate naming both plugins", err)
	}
	shared := 0
	for _, p := range r.List(ctx) {
		if p.Name == "multi/up" && errors.Is(p.Err, ErrDuplicate) {
			shared++
		}
	}
	if shared != 2 {
		t.Fatalf("List marks %d rows of multi/up as shared, want 2", shared)
	}
	if err := os.Symlink(filepath.Join(testBin, "multi"), filepath.Join(dir, "multi")); err != nil {
		t.Fatal(err)
	}
	r2 := open(t, dir, Options{})
	if o, err := r2.Objective(ctx, "multi/up"); err != nil || o.u.name != "multi" {
		t.Fatalf("with a plugin named like its prefix: %v, %v; want that plugin's", o, err)
	}
}

// What a script prints reaches the host's log at info level: in init()
// (which used to break the go-plugin handshake on stdout), with
// fmt.Println in Evaluate and with the log package (both used to vanish
// or show only at debug level).
func TestScriptOutputIsLogged(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "loud.go"), `package loud

import (
	"context"
	"fmt"
	"log"

	"github.com/tesbo/tesbo/sdk"
)

func init() { fmt.Println("LOADING-LINE") }

func Info() sdk.Info { return sdk.Info{Name: "loud", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	fmt.Println("PRINT-LINE")
	log.Println("LOG-LINE")
	return x[0], nil
}
`)
	var buf testenv.SyncBuffer
	r := open(t, dir, Options{Logger: zerolog.New(&buf).Level(zerolog.InfoLevel)})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "loud")
	if err != nil {
		t.Fatalf("a script printing in init(): %v", err)
	}
	if v, err := o.Evaluate(ctx, []float64{0.5}); err != nil || v != 0.5 {
		t.Fatalf("Evaluate: %v, %v", v, err)
	}
	want := []string{"LOADING-LINE", "PRINT-LINE", "LOG-LINE"}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return strings.Contains(buf.String(), w) })
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log at info level lacks %v:\n%s", missing, buf.String())
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
