package sdk

import pb "github.com/tesbo/tesbo/sdk/proto"

// The conversions between SDK types and their protocol messages, for the
// plugin side (host/loader has its own for the host side; the point
// conversions are shared, in internal/pluginwire).

// infoToProto converts an Info to its protocol message (capability flags
// unset).
func infoToProto(i Info) *pb.ObjectiveInfo {
	out := &pb.ObjectiveInfo{Name: i.Name, Minimize: i.Minimize, Optimum: i.Optimum, InitialDesign: uint32(max(i.InitialDesign, 0)),
		MaxStep: uint32(min(max(i.MaxStep, 0), MaxStepLimit+1))}
	out.Params = make([]*pb.Param, len(i.Params))
	for k, p := range i.Params {
		out.Params[k] = &pb.Param{Name: p.Name, Kind: pb.ParamKind(p.Kind), Low: p.Low, High: p.High, Choices: p.Choices}
		if c := p.ActiveIf; c != nil {
			out.Params[k].ActiveIf = &pb.Condition{Parent: c.Parent, Values: c.Values}
		}
	}
	for _, o := range i.Outputs {
		out.Outputs = append(out.Outputs, &pb.Output{Name: o.Name, Goal: pb.OutputGoal(o.Goal), Feasible: pb.OutputSide(o.Feasible), Bound: o.Bound})
	}
	out.RefPoint = i.RefPoint
	return out
}

// infoFromProto converts a protocol message to an Info. Unknown parameter
// kinds are kept as they are so that Info.Validate reports them.
func infoFromProto(m *pb.ObjectiveInfo) Info {
	if m == nil {
		return Info{}
	}
	out := Info{Name: m.Name, Minimize: m.Minimize, InitialDesign: int(m.InitialDesign), MaxStep: int(m.MaxStep)}
	if m.Optimum != nil {
		v := *m.Optimum
		out.Optimum = &v
	}
	if len(m.Params) > 0 {
		out.Params = make([]Param, len(m.Params))
	}
	for k, p := range m.Params {
		out.Params[k] = Param{Name: p.GetName(), Kind: ParamKind(p.GetKind()), Low: p.GetLow(), High: p.GetHigh(), Choices: p.GetChoices()}
		if c := p.GetActiveIf(); c != nil {
			out.Params[k].ActiveIf = &Condition{Parent: c.GetParent(), Values: c.GetValues()}
		}
	}
	for _, o := range m.Outputs {
		out.Outputs = append(out.Outputs, Output{Name: o.GetName(), Goal: Goal(o.GetGoal()), Feasible: Side(o.GetFeasible()), Bound: o.Bound})
	}
	out.RefPoint = m.RefPoint
	return out
}

// observationsFromProto converts protocol observations.
func observationsFromProto(obs []*pb.Observation) []Observation {
	out := make([]Observation, len(obs))
	for i, o := range obs {
		out[i] = Observation{X: o.GetX(), Value: o.GetValue(), Outputs: o.GetOutputs()}
	}
	return out
}
