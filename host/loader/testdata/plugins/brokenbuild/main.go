// Command brokenbuild does not compile: the loader must report the
// compiler's file:line output.
package main

import "github.com/tesbo/tesbo/sdk"

func main() {
	sdk.ServeObjective(undefinedObjective)
}
