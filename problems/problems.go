package problems

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tesbo/tesbo/problems/conditional"
	"github.com/tesbo/tesbo/problems/curves"
	"github.com/tesbo/tesbo/problems/fidelity"
	"github.com/tesbo/tesbo/problems/mixedsuite"
	"github.com/tesbo/tesbo/problems/synthetic"
	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/problems/usersuite"
	"github.com/tesbo/tesbo/sdk"
)

// Keyed is a problem that lists the parameters its Configure accepts, so
// that a harness applying one set of parameters to many problems (tesbo-host
// bench --param) gives each problem only the keys it knows.
type Keyed interface {
	Keys() []string
}

var (
	_ Keyed = (*synthetic.Objective)(nil)
	_ Keyed = (*synthetic.MultiObjective)(nil)
	_ Keyed = (*usersuite.Objective)(nil)
	_ Keyed = (*conditional.Objective)(nil)
	_ Keyed = (*curves.Objective)(nil)
)

// New opens the problem called name, a new instance per call:
// synthetic/<name> (package synthetic, with its parameters unset: the
// caller configures them; the several-output problems of testfunc.NewMulti
// as synthetic.MultiObjective), the user suite's user/<name>, the mixed
// suite's mixed/<name>, the learning curves' curve/<name>, the
// multi-fidelity test functions mf/<name> and the conditional problems
// cond/<name>. This is how tesbo-host bench runs them
// in process.
func New(name string) (sdk.Objective, error) {
	if strings.HasPrefix(name, conditional.Prefix) {
		o, err := conditional.New(name)
		return o, err
	}
	if strings.HasPrefix(name, curves.Prefix) {
		o, err := curves.New(name)
		return o, err
	}
	if strings.HasPrefix(name, fidelity.Prefix) {
		o, err := fidelity.New(name)
		return o, err
	}
	if strings.HasPrefix(name, mixedsuite.Prefix) {
		o, err := mixedsuite.New(name)
		return o, err
	}
	if strings.HasPrefix(name, usersuite.Prefix) {
		o, err := usersuite.New(name)
		return o, err
	}
	short, ok := strings.CutPrefix(name, synthetic.Prefix)
	if !ok {
		return nil, fmt.Errorf("unknown problem %q: the built-in problems are synthetic/<name> (see 'tesbo-host plugins')", name)
	}
	if slices.Contains(testfunc.MultiNames(), short) {
		o, err := synthetic.NewMulti(short)
		return o, err
	}
	o, err := synthetic.New(short)
	if err != nil {
		return nil, fmt.Errorf("problem %s: %w", name, err)
	}
	return o, nil
}

// Served are the objectives the synthetic plugin (plugins/synthetic)
// serves, by name: every synthetic/<name>, the user suite's user/<name>
// the learning curves' curve/<name>, the multi-fidelity test functions
// mf/<name> and the conditional problems cond/<name>.
func Served() map[string]sdk.Objective {
	m := synthetic.All()
	maps.Copy(m, usersuite.All())
	maps.Copy(m, curves.All())
	maps.Copy(m, fidelity.All())
	maps.Copy(m, conditional.All())
	return m
}
