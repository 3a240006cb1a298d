// Command hangstart never completes the handshake.
package main

import "time"

func main() {
	for {
		time.Sleep(time.Hour)
	}
}
