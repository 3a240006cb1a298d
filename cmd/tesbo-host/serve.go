package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/serve"
)

type serveFlags struct {
	db, addr, token, logLevel string
}

// Token length bounds of --token.
const (
	minTokenLen = 16
	maxTokenLen = 256
)

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --db PATH|URL [--addr 127.0.0.1:8080] [--token T]",
		Short: "Watch the studies of a database in a web browser",
		Long: `Serve a read-only web view of the studies in --db: a list of the studies and,
for each, its progress, trials, parameters, time per iteration and what the
model believes about the maximum, updated live while other processes run the
studies. It prints the address to open. It only reads --db, which may be on a
read-only mount.

It listens on loopback by default. An --addr reachable from other machines
(e.g. 0.0.0.0:8080) requires --token: every request must then carry it, as
the printed ?token= link does once (it sets a cookie) or as the header
Authorization: Bearer TOKEN. Stop it with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "study database: SQLite path or postgres:// URL (only read)")
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on, host:port")
	fl.StringVar(&f.token, "token", "", fmt.Sprintf("secret every request must carry (%d to %d printable characters); required beyond loopback", minTokenLen, maxTokenLen))
	fl.StringVar(&f.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	cmd.MarkFlagRequired("db")
	return cmd
}

// checkServeFlags validates the flags: a port, a well-formed token, and a
// token whenever --addr is not a loopback address.
func checkServeFlags(f *serveFlags) error {
	host, port, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usagef("bad --addr %q: want host:port, e.g. 127.0.0.1:8080", f.addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return usagef("bad --addr %q: the port must be a number from 0 to 65535", f.addr)
	}
	if f.token != "" {
		if n := len(f.token); n < minTokenLen || n > maxTokenLen {
			return usagef("bad --token: %d characters, want %d to %d (e.g. the output of 'openssl rand -hex 16')", n, minTokenLen, maxTokenLen)
		}
		for _, c := range f.token {
			if c <= ' ' || c > '~' {
				return usagef("bad --token: only printable ASCII characters without spaces (e.g. the output of 'openssl rand -hex 16')")
			}
		}
	}
	ip := net.ParseIP(host)
	loopback := strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())
	if !loopback && f.token == "" {
		return usagef("--addr %s can be reached from other machines: set --token too (e.g. --token $(openssl rand -hex 16)), or listen on 127.0.0.1", f.addr)
	}
	return nil
}

func runServe(cmd *cobra.Command, f *serveFlags) error {
	if err := checkServeFlags(f); err != nil {
		return err
	}
	log, err := (&common{logLevel: f.logLevel}).logger()
	if err != nil {
		return err
	}
	warnPasswordInURL(cmd.ErrOrStderr(), f.db)
	db, err := openDBReadOnly(cmd.Context(), f.db, log)
	if err != nil {
		return err
	}
	defer db.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usagef("cannot listen on --addr %s: %v", f.addr, err)
	}
	link := serveLink(ln.Addr(), f.token, os.Hostname)
	fmt.Fprintf(cmd.OutOrStdout(), "tesbo-host: serving %s on %s\n", db.Path(), link)
	srv := serve.New(db, serve.Settings{Token: f.token, Logger: log})
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	ctx, sig := signalContext(cmd.Context())
	defer sig.stop()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		srv.Close()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	srv.Close() // ends the event streams, which Shutdown would wait for
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("serve: shut down: %w", err)
	}
	return nil
}

// serveLink is the address serve prints to open. Listening on every
// interface (0.0.0.0, ::) it names the machine, since http://[::]:8080/
// opens nothing from the other machines the address is meant for; the
// token, when set, rides along once as ?token=.
func serveLink(addr net.Addr, token string, hostname func() (string, error)) string {
	host := addr.String()
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		if h, err := hostname(); err == nil && h != "" {
			host = net.JoinHostPort(h, strconv.Itoa(tcp.Port))
		}
	}
	link := "http://" + host + "/"
	if token != "" {
		link += "?token=" + url.QueryEscape(token)
	}
	return link
}
