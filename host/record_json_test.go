package host

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A Record with NaN coordinates (inactive parameters) is JSON with null
// there and reads back with NaN; one without NaN is encoded as a plain
// struct would be.
func TestRecordJSONInactive(t *testing.T) {
	nan, v := math.NaN(), 1.5
	r := Record{Iter: 2, Batch: [][]float64{{1, nan}, {0, 0.5}}, BestX: []float64{nan, 2}, BestValue: &v}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"batch":[[1,null],[0,0.5]]`) || !strings.Contains(string(b), `"best_x":[null,2]`) {
		t.Fatalf("encoded %s", b)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Batch[0][1]) || back.Batch[1][1] != 0.5 || !math.IsNaN(back.BestX[0]) || *back.BestValue != 1.5 || back.Iter != 2 {
		t.Fatalf("decoded %+v", back)
	}
	plain := Record{Iter: 1, Batch: [][]float64{{1, 2}}, BestX: []float64{1, 2}}
	got, _ := json.Marshal(plain)
	want, _ := json.Marshal(recordAlias(plain))
	if string(got) != string(want) {
		t.Fatalf("a record without NaN changed encoding:\n%s\n%s", got, want)
	}
}
