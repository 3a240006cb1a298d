package bench

// Whether a study stored in the output directory is one this suite would
// make: resuming it is only right when its settings are the suite's.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/fielddiff"
	"github.com/tesbo/tesbo/store"
)

// incompatibleError reports a stored study started with other settings
// than the suite's (compatible), which checkStored turns into the
// suite's refusal; other errors of compatible are the database's.
type incompatibleError struct{ err error }

func (e *incompatibleError) Error() string { return e.err.Error() }
func (e *incompatibleError) Unwrap() error { return e.err }

// checkStored refuses, before anything runs or is written, a suite whose
// output directory holds studies of its runs' names made with other
// settings: each of those runs would fail, and the tables rewritten
// without them would lose the stored results until the old settings run
// again. It names the first such study and counts them.
func (r *runner) checkStored(ctx context.Context, specs []runSpec) error {
	var first error
	n := 0
	for _, spec := range specs {
		stored, err := r.db.Study(ctx, spec.studyName())
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("study database: %w", err)
		}
		err = r.compatible(ctx, stored, r.s.studyOptions(spec, r.params[spec.Problem.Label()]))
		var ie *incompatibleError
		if !errors.As(err, &ie) {
			if err != nil {
				return err
			}
			continue
		}
		if n++; first == nil {
			first = err
		}
	}
	switch {
	case n == 1:
		return &InvalidError{first}
	case n > 1:
		return &InvalidError{fmt.Errorf("%w (and %d more of this suite's runs stored with other settings)", first, n-1)}
	}
	return nil
}

// compatible checks that a stored study was started with the settings this
// suite would use (all stored options except the iteration budget, the
// evaluation parallelism and the inner optimizer's worker count, none of
// which changes the results), and with the same seed.
func (r *runner) compatible(ctx context.Context, stored *store.Study, o host.Options) error {
	if stored.Seed != o.Seed {
		return &incompatibleError{fmt.Errorf("study %q in %s has seed %d, the suite derives %d (was it run with a different seed rule?): use a new --out",
			stored.Name, r.db.Path(), stored.Seed, o.Seed)}
	}
	have, _, err := host.StoredSettings(ctx, hostStorage(r.db), stored.Name)
	if err != nil {
		return fmt.Errorf("stored settings: %w", err)
	}
	hm, wm := comparableSettings(have), comparableSettings(o)
	if !reflect.DeepEqual(hm, wm) {
		return &incompatibleError{fmt.Errorf("study %q in %s was run with other settings (%s): use a new --out or the old settings",
			stored.Name, r.db.Path(), settingsDiff(hm, wm))}
	}
	return nil
}

// settingsDiff names the settings in which the stored options differ from
// the suite's (JSON fields), with both values where they are short.
func settingsDiff(stored, suite any) string {
	var diff []string
	for _, f := range fielddiff.Fields(stored, suite) {
		if f.Short() {
			diff = append(diff, fmt.Sprintf("%s: stored %s, this suite %s", f.Key, f.A, f.B))
		} else {
			diff = append(diff, f.Key)
		}
	}
	if len(diff) == 0 {
		return "settings differ"
	}
	return strings.Join(diff, "; ")
}

// comparableSettings is o's stored settings (host.Options.Stored, defaults
// filled in) minus the fields that may change between invocations without
// changing the results: the iteration budget, the evaluation parallelism
// and the inner optimizer's worker count.
func comparableSettings(o host.Options) host.Options {
	o = o.Stored()
	o.Iters, o.Parallel, o.AcqOptions.Optimize.Workers = 0, 0, 0
	return o
}
