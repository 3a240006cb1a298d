//go:build !unix

package tes

func processCPU() int64 { return -1 }
