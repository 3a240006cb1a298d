// Command fig8 redraws the paper's Fig. 8 (unedited attacker | synthesized
// face | matched gallery face) for the best evaluation of every acquisition in
// a `tesbo-host bench` output directory on the facerec objective, and prints
// a table of each acquisition's best distance.
//
//	go run ./plugins/facerec/cmd/fig8 -db OUT/studies.db -out docs/results/facerec \
//	    -param gallery=... -param attacker=...
//
// The -param pairs must be the ones the bench ran with (they select the
// attacker photo and gallery); the figures are written as fig8_<acq>.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/attack"
	"github.com/tesbo/tesbo/store"
)

type params map[string]string

func (p params) String() string { return fmt.Sprint(map[string]string(p)) }
func (p params) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want key=value, got %q", s)
	}
	p[k] = v
	return nil
}

// best is the lowest completed distance of one acquisition over its runs.
type best struct {
	acq, study string
	x          []float64
	d          float64
	runs       int
}

func main() {
	dbPath := flag.String("db", "", "the bench's studies.db")
	out := flag.String("out", ".", "directory for fig8_<acq>.png")
	ps := params{}
	flag.Var(ps, "param", "facerec run parameter key=value (repeatable): the bench's")
	flag.Parse()
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
	if err := run(context.Background(), *dbPath, *out, ps, log); err != nil {
		fmt.Fprintln(os.Stderr, "fig8:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dbPath, out string, ps params, log zerolog.Logger) error {
	if dbPath == "" {
		return fmt.Errorf("-db is required")
	}
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	bests, err := bestPerAcquisition(ctx, db)
	if err != nil {
		return err
	}
	cfg, err := attack.ParseParams(ps)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	fmt.Println("| acquisition | runs | best d | study | matched | d (redrawn) | success (d < θ) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, b := range bests {
		path := filepath.Join(out, "fig8_"+b.acq+".png")
		o, err := attack.Fig8(ctx, cfg, b.x, path, log)
		if err != nil {
			return fmt.Errorf("%s: %w", b.acq, err)
		}
		fmt.Printf("| %s | %d | %.4f | %s | %s | %.4f | %v |\n", b.acq, b.runs, b.d, b.study, o.Match.Identity, o.Match.Distance, o.Success)
	}
	return nil
}

func bestPerAcquisition(ctx context.Context, db *store.DB) ([]best, error) {
	names, err := db.StudyNames(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*best{}
	for _, n := range names {
		st, err := db.Study(ctx, n)
		if err != nil {
			return nil, err
		}
		if st.Objective != attack.Name {
			continue
		}
		trials, err := db.Trials(ctx, st.ID)
		if err != nil {
			return nil, err
		}
		b := by[st.Acquisition]
		if b == nil {
			b = &best{acq: st.Acquisition, d: 1e300}
			by[st.Acquisition] = b
		}
		b.runs++
		for _, t := range trials {
			if t.Status == store.Complete && t.Value < b.d {
				b.d, b.x, b.study = t.Value, t.X, n
			}
		}
	}
	var out []best
	for _, b := range by {
		if b.x != nil {
			out = append(out, *b)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no completed facerec evaluations in the database")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].d < out[j].d })
	return out, nil
}
