package sdk

import pb "github.com/tesbo/tesbo/sdk/proto"

// The conversions between SDK types and their protocol messages are
// exported for the host's loader; plugin authors never need them.

// InfoToProto converts an Info to its protocol message (capability flags
// unset).
func InfoToProto(i Info) *pb.ObjectiveInfo {
	out := &pb.ObjectiveInfo{Name: i.Name, Minimize: i.Minimize, Optimum: i.Optimum}
	out.Params = make([]*pb.Param, len(i.Params))
	for k, p := range i.Params {
		out.Params[k] = &pb.Param{Name: p.Name, Kind: pb.ParamKind(p.Kind), Low: p.Low, High: p.High, Choices: p.Choices}
	}
	return out
}

// InfoFromProto converts a protocol message to an Info. Unknown parameter
// kinds are kept as they are so that Info.Validate reports them.
func InfoFromProto(m *pb.ObjectiveInfo) Info {
	if m == nil {
		return Info{}
	}
	out := Info{Name: m.Name, Minimize: m.Minimize}
	if m.Optimum != nil {
		v := *m.Optimum
		out.Optimum = &v
	}
	if len(m.Params) > 0 {
		out.Params = make([]Param, len(m.Params))
	}
	for k, p := range m.Params {
		out.Params[k] = Param{Name: p.GetName(), Kind: ParamKind(p.GetKind()), Low: p.GetLow(), High: p.GetHigh(), Choices: p.GetChoices()}
	}
	return out
}

// PointsToProto converts points (one per row) to protocol messages.
func PointsToProto(pts [][]float64) []*pb.Point {
	out := make([]*pb.Point, len(pts))
	for i, x := range pts {
		out[i] = &pb.Point{X: x}
	}
	return out
}

// PointsFromProto converts protocol points to rows.
func PointsFromProto(pts []*pb.Point) [][]float64 {
	out := make([][]float64, len(pts))
	for i, p := range pts {
		out[i] = p.GetX()
	}
	return out
}

// ObservationsToProto converts observations to protocol messages.
func ObservationsToProto(obs []Observation) []*pb.Observation {
	out := make([]*pb.Observation, len(obs))
	for i, o := range obs {
		out[i] = &pb.Observation{X: o.X, Value: o.Value}
	}
	return out
}

// ObservationsFromProto converts protocol observations.
func ObservationsFromProto(obs []*pb.Observation) []Observation {
	out := make([]Observation, len(obs))
	for i, o := range obs {
		out[i] = Observation{X: o.GetX(), Value: o.GetValue()}
	}
	return out
}
