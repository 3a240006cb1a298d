package lib_test

import (
	"testing"

	"example.com/mod/lib"
)

func TestOwn(t *testing.T) { lib.OwnTest() }
