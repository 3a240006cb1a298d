package main

import (
	"fmt"

	"example.com/mod/lib"
)

func main() {
	lib.Used()
	fmt.Println(lib.New().F)
}
