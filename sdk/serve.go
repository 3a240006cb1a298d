package sdk

// ServeObjective serves o to the host over go-plugin's gRPC transport and
// returns when the host is done with the plugin. A plugin's main calls this
// and nothing else: func main() { sdk.ServeObjective(myObjective{}) }.
func ServeObjective(o Objective) {
	ServeObjectives(map[string]Objective{"": o})
}

// ServeObjectives serves several named objectives from one plugin binary
// (plugins/synthetic serves "synthetic/branin", "synthetic/hartmann6", ...).
// The host lists the names and addresses each objective by its name.
func ServeObjectives(objs map[string]Objective) {
	serve(&server{objectives: objs})
}

// ServeSuggester serves s to the host; the plugin is then an acquisition
// variant that proposes whole batches (see Suggester).
func ServeSuggester(s Suggester) {
	serve(&server{suggester: s})
}

// ServeAcquisition serves a to the host; the plugin is then an acquisition
// function the host maximizes (see Acquisition).
func ServeAcquisition(a Acquisition) {
	serve(&server{acquisition: a})
}
