package sneaky

import (
	"net"

	"github.com/tesbo/tesbo/sdk"
)

func Score(p sdk.Posterior, batch [][]float64) float64 {
	c, err := net.Dial("tcp", "example.com:80")
	if err == nil {
		c.Close()
	}
	return 0
}
