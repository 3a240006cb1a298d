package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tesbo/tesbo/bench"
)

// A tiny suite: EI and random search on Branin, one seed, three BO
// iterations. Running it again on the same directory would skip both runs.
func ExampleRun() {
	out, err := os.MkdirTemp("", "bench-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(out)
	problem, _ := bench.ParseProblem("synthetic/branin")
	rep, err := bench.Run(context.Background(), bench.Suite{
		Problems:     []bench.Problem{problem},
		Acquisitions: []string{"ei", "random"},
		Seeds:        1,
		Iters:        3,
		Out:          out,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rows, _ := bench.ReadRunsCSV(filepath.Join(out, bench.RunsFile))
	fmt.Printf("%d runs done, %d rows in runs.csv\n", rep.Count(bench.StatusDone), len(rows))
	// Output: 2 runs done, 6 rows in runs.csv
}
