package tesbo

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// outsideDocs name documents the team keeps next to the repository, not in
// it. A user of the repository does not have them, so no tracked file may
// send a reader there: what a user needs belongs in the repository's own
// docs (README.md, docs/results/README.md, the package docs).
var outsideDocs = []string{"DESIGN.md", "ANCHORS.md", "PAPER-NOTES"}

// TestNoReferencesOutsideRepository fails when a tracked file other than
// this test and the CI set-up mentions one of outsideDocs.
func TestNoReferencesOutsideRepository(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		testenv.Need(t, "git ls-files (the test reads the tracked files): "+err.Error())
	}
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "docrefs_test.go" || strings.HasPrefix(path, ".ci/") {
			continue
		}
		data, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			for _, name := range outsideDocs {
				if bytes.Contains(line, []byte(name)) {
					t.Errorf("%s:%d mentions %s, which is not in the repository: move what a user needs into the repository's docs", path, i+1, name)
				}
			}
		}
	}
}
