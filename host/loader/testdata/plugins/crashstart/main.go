// Command crashstart fails before serving, as a plugin whose data is
// missing would.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "crashstart: cannot open dataset /nonexistent/data.bin")
	os.Exit(3)
}
