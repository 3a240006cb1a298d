package main

import (
	"context"
	"strings"
	"testing"
)

// A train_size or test_size given beyond the data set is refused; the
// defaults (10000 and 2000) take all of a smaller set.
func TestConfigureSizesBeyondData(t *testing.T) {
	dir := fakeFashion(t, 800, 200)
	ctx := context.Background()
	for _, c := range []struct{ key, val, want string }{
		{"train_size", "801", "train_size 801 exceeds the 800 training images"},
		{"test_size", "201", "test_size 201 exceeds the 200 test images"},
	} {
		err := NewObjective().Configure(ctx, map[string]string{"data_dir": dir, c.key: c.val})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v, want %q", c.key, c.val, err, c.want)
		}
	}
	for _, p := range []map[string]string{{"data_dir": dir}, {"data_dir": dir, "train_size": "800", "test_size": "200"}} {
		if err := NewObjective().Configure(ctx, p); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}
}
