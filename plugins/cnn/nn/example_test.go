package nn_test

import (
	"context"
	"fmt"

	"github.com/tesbo/tesbo/plugins/cnn/nn"
)

// Train a small CNN to tell 8×8 images lit on the left from images lit on
// the right.
func ExampleTrain() {
	const n, side = 200, 8
	in := nn.Shape{H: side, W: side, C: 1}
	x := make([]float32, n*in.Size())
	labels := make([]int, n)
	for i := range n {
		labels[i] = i % 2
		for r := range side {
			for c := range side / 2 {
				col := c + labels[i]*side/2 // class 0 lights columns 0–3, class 1 columns 4–7
				x[i*in.Size()+r*side+col] = 1
			}
		}
	}
	net, err := nn.NewCNN[float32](nn.Config{Input: in, Classes: 2, Filters: 4, Dense: 16}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	stats, err := nn.Train(context.Background(), net, x, labels, nn.TrainSettings{BatchSize: 20, Epochs: 2, LR: 0.05, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d updates, training accuracy %.2f\n", stats.Steps, net.Accuracy(x, labels))
	// Output: 20 updates, training accuracy 1.00
}
