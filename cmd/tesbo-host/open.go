package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/rs/zerolog"
	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/sdk"
)

// openDB opens the study database, classifying every failure as bad input.
// An older schema is migrated only when host.NewStudy or host.OpenStudy
// has accepted the study, so a rejected command writes nothing. Waits for
// a locked database, and for a PostgreSQL server that cannot be reached
// (host.StorageOptions.RetryConnect: a worker started while the server restarts
// waits for it), are logged to log; ctx ends them.
func openDB(ctx context.Context, sig *signals, path string, create bool, log zerolog.Logger) (*host.Storage, error) {
	warnPasswordInURL(os.Stderr, path)
	db, err := host.OpenStorage(ctx, path, host.StorageOptions{Create: create, BusyTimeout: dbBusyTimeout, DeferMigration: true, RetryConnect: true, Logger: log})
	if err != nil {
		if ctx.Err() != nil && sig.sig != nil {
			return nil, interruptedError{code: exitCodeFor(sig.sig), err: fmt.Errorf("interrupted (%v) while waiting for the database: %v", context.Cause(ctx), err)}
		}
		return nil, usageError{err}
	}
	return db, nil
}

// openDBReadOnly opens the study database for the commands that only read
// it ('trials', 'serve'): it works in a read-only directory or mount and
// never writes (host.StorageOptions.ReadOnly).
func openDBReadOnly(ctx context.Context, path string, log zerolog.Logger) (*host.Storage, error) {
	db, err := host.OpenStorage(ctx, path, host.StorageOptions{BusyTimeout: dbBusyTimeout, ReadOnly: true, Logger: log})
	if errors.Is(err, host.ErrUnavailable) {
		return nil, err // the server is down: exit 1, not bad input
	}
	if err != nil {
		return nil, usageError{err}
	}
	return db, nil
}

// openPlugins discovers the plugins directory.
func openPlugins(ctx context.Context, c *common, dir string, log zerolog.Logger) (*loader.Registry, error) {
	lo, err := c.loaderOptions(log)
	if err != nil {
		return nil, err
	}
	reg, err := loader.Discover(ctx, dir, lo)
	if err != nil {
		return nil, usagef("plugins directory %s: %v (set --plugins or TESBO_PLUGINS)", dir, err)
	}
	// A pin that names nothing or does not match refuses the run before
	// anything starts: --plugin-sha256 fails closed.
	if err := reg.VerifyChecksums(); err != nil {
		reg.Close()
		return nil, usagef("--plugin-sha256: %v", err)
	}
	return reg, nil
}

// loadObjective starts the objective's plugin; an unknown name lists the
// objectives the directory serves.
func loadObjective(ctx context.Context, reg *loader.Registry, name string) (*loader.Objective, error) {
	obj, err := reg.Objective(ctx, name)
	if err == nil {
		return obj, nil
	}
	if ie := interruptedBy(ctx, "starting objective "+name); ie != nil {
		return nil, ie
	}
	if errors.Is(err, loader.ErrNotFound) || errors.Is(err, loader.ErrWrongKind) {
		var names []string
		for _, p := range reg.List(ctx) {
			if p.Kind == loader.KindObjective && p.Err == nil {
				names = append(names, p.Name)
			}
		}
		sort.Strings(names)
		return nil, usagef("unknown objective %q in %s: available objectives are %s", name, reg.Dir(), listOrNone(names))
	}
	return nil, usagef("objective %s: %v", name, err)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// customAcq is an acquisition plugin as the host takes it: an acquisition
// function the host maximizes (host.Options.Proposer) or a plugin that
// proposes its batches itself (host.Options.Suggester). Both are nil for a
// built-in acquisition, which the host looks up by name.
type customAcq struct {
	proposer  acq.Proposer
	suggester sdk.Suggester
}

// resolveAcq returns the zero customAcq for a built-in acquisition or the
// acquisition plugin of that name. A plugin of that name that fails to load
// is reported with its own error (a script that does not compile is not an
// "unknown acquisition"); an unknown name lists all valid ones.
func resolveAcq(ctx context.Context, reg *loader.Registry, name string) (customAcq, error) {
	if slices.Contains(acq.Names(), name) {
		return customAcq{}, nil
	}
	// absent: no plugin of that kind by that name (try the next kind); any
	// other error is the plugin's and is reported.
	absent := func(err error) bool {
		return errors.Is(err, loader.ErrNotFound) || errors.Is(err, loader.ErrWrongKind)
	}
	a, err := reg.Acquisition(ctx, name)
	if err == nil {
		return customAcq{proposer: host.AcquisitionProposer(a, acq.OptimizeSettings{RawSamples: 256, Restarts: 4, MaxIter: 50})}, nil
	}
	if !absent(err) {
		return customAcq{}, usagef("acquisition %s: %w", name, err)
	}
	s, err := reg.Suggester(ctx, name)
	if err == nil {
		return customAcq{suggester: s}, nil
	}
	if !absent(err) {
		return customAcq{}, usagef("acquisition %s: %w", name, err)
	}
	names := acq.Names()
	for _, p := range reg.List(ctx) {
		if (p.Kind == loader.KindAcquisition || p.Kind == loader.KindSuggester) && p.Err == nil {
			names = append(names, p.Name)
		}
	}
	return customAcq{}, usagef("unknown acquisition %q: valid ones are %s", name, strings.Join(names, ", "))
}
