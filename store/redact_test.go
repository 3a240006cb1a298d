package store

import (
	"strings"
	"testing"
	"time"
)

// TestRedact: a password in a PostgreSQL URL, in the user part or as a
// password= parameter, is masked; SQLite paths are shown as they are.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"tesbo.db":                                           "tesbo.db",
		"/data/a:b@c.db":                                     "/data/a:b@c.db",
		"postgres://u:hunter2@db.example/tesbo":              "postgres://u:xxxxx@db.example/tesbo",
		"postgresql://u@db.example/tesbo":                    "postgresql://u@db.example/tesbo",
		"postgres://u@/tesbo?host=/run/pg&password=hunter2":  "postgres://u@/tesbo?host=%2Frun%2Fpg&password=xxxxx",
		"postgres://u:hunter2@db.example:bad/tesbo":          "postgres://(unparsable URL)",
		"postgres://u:hunter2@/tesbo?host=/run/pg&sslmode=x": "postgres://u:xxxxx@/tesbo?host=/run/pg&sslmode=x",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOpenErrorsHidePassword: the errors of opening a PostgreSQL URL (one
// that does not parse, a server that does not answer) do not quote its
// password.
func TestOpenErrorsHidePassword(t *testing.T) {
	for _, target := range []string{
		"postgres://u:hunter2@127.0.0.1:bad/tesbo",
		"postgres://u:hunter2@127.0.0.1:1/tesbo?connect_timeout=1",
		"postgres://u@127.0.0.1:1/tesbo?password=hunter2&connect_timeout=1",
		"postgres://u:hunter2@127.0.0.1:1/tesbo?sslmode=nonsense",
	} {
		_, err := Open(target, Options{BusyTimeout: time.Second})
		if err == nil {
			t.Fatalf("%s: opened", target)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error shows the password: %v", target, err)
		}
	}
}
