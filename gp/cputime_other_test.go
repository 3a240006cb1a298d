//go:build !unix

package gp

func processCPU() int64 { return -1 }
