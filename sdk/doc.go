// Package sdk is tesbo's public plugin SDK: the types a plugin author sees
// (Param, Info, Result, Observation), the interfaces a plugin implements
// (Objective and its optional Configurable, Detailed and NoiseFree
// extensions; Suggester; Acquisition) and the functions a plugin's main calls
// to serve them to the host over go-plugin's gRPC transport (ServeObjective,
// ServeObjectives, ServeSuggester, ServeAcquisition).
//
// A whole objective plugin is
//
//	func main() { sdk.ServeObjective(myObjective{}) }
//
// The host (package host/loader) discovers plugins in a directory, starts
// them as child processes, talks to them through the protocol in sdk/proto
// and contains their failures. Yaegi scripts use the same types: an
// objective script defines Info() sdk.Info and Evaluate(ctx, x); an
// acquisition script defines Score(p sdk.Posterior, batch [][]float64) float64.
// See README.md beside this file for pasteable examples of every kind.
//
// sdk imports no other public tesbo package (only the generated protocol
// and the internal go-plugin glue it shares with the host), so a plugin
// links only this package (and go-plugin, gRPC and protobuf).
package sdk
