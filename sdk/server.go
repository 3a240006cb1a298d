package sdk

import (
	"fmt"
	"os"
)

// server holds what one plugin process serves.
type server struct {
	objectives  map[string]Objective
	suggester   Suggester
	acquisition Acquisition
}

// serve is replaced by the go-plugin transport in plugin.go.
func serve(s *server) {
	fmt.Fprintln(os.Stderr, "tesbo sdk: plugin transport not built yet")
	os.Exit(1)
}
