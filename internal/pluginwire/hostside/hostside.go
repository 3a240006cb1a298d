// Package hostside holds the host side's conversions between SDK types and
// protocol messages (the plugin side's are unexported in package sdk; the
// point conversions are shared, in internal/pluginwire). It imports sdk,
// which pluginwire itself must not: sdk imports pluginwire.
package hostside

import (
	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// InfoToProto converts an Info to its protocol message (capability flags
// unset).
func InfoToProto(i sdk.Info) *pb.ObjectiveInfo {
	out := &pb.ObjectiveInfo{Name: i.Name, Minimize: i.Minimize, Optimum: i.Optimum, InitialDesign: uint32(max(i.InitialDesign, 0)),
		MaxStep: uint32(min(max(i.MaxStep, 0), sdk.MaxStepLimit+1))}
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

// InfoFromProto converts a protocol message to an Info. Unknown parameter
// kinds are kept as they are so that Info.Validate reports them.
func InfoFromProto(m *pb.ObjectiveInfo) sdk.Info {
	if m == nil {
		return sdk.Info{}
	}
	out := sdk.Info{Name: m.Name, Minimize: m.Minimize, InitialDesign: int(m.InitialDesign), MaxStep: int(m.MaxStep)}
	if m.Optimum != nil {
		v := *m.Optimum
		out.Optimum = &v
	}
	if len(m.Params) > 0 {
		out.Params = make([]sdk.Param, len(m.Params))
	}
	for k, p := range m.Params {
		out.Params[k] = sdk.Param{Name: p.GetName(), Kind: sdk.ParamKind(p.GetKind()), Low: p.GetLow(), High: p.GetHigh(), Choices: p.GetChoices()}
		if c := p.GetActiveIf(); c != nil {
			out.Params[k].ActiveIf = &sdk.Condition{Parent: c.GetParent(), Values: c.GetValues()}
		}
	}
	for _, o := range m.Outputs {
		out.Outputs = append(out.Outputs, sdk.Output{Name: o.GetName(), Goal: sdk.Goal(o.GetGoal()), Feasible: sdk.Side(o.GetFeasible()), Bound: o.Bound})
	}
	out.RefPoint = m.RefPoint
	return out
}

// ObservationsToProto converts observations to protocol messages.
func ObservationsToProto(obs []sdk.Observation) []*pb.Observation {
	out := make([]*pb.Observation, len(obs))
	for i, o := range obs {
		out[i] = &pb.Observation{X: o.X, Value: o.Value, Outputs: o.Outputs}
	}
	return out
}
