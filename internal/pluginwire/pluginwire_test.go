package pluginwire

import "testing"

func TestPointsRoundTrip(t *testing.T) {
	pts := [][]float64{{1}, {2, 3}, {}}
	got := PointsFromProto(PointsToProto(pts))
	if len(got) != 3 || got[0][0] != 1 || got[1][1] != 3 || len(got[2]) != 0 {
		t.Fatalf("points: %v", got)
	}
}
