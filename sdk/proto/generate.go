// Package proto holds the gRPC protocol between the tesbo host and its
// plugins (tesbo.proto) and the Go code generated from it. Regenerate with
// `go generate ./sdk/proto`; it needs Debian's protobuf-compiler (protoc
// 3.21, which the committed code was generated with) and the go command.
// The Go plugins are pinned in the go:generate line below: gen.sh installs
// exactly those versions into a temporary directory and passes them to
// protoc by path, so whatever protoc-gen-go is on PATH does not matter.
//
// The Python stubs of examples/python-objective are generated from the same
// file (see that directory's README).
package proto

//go:generate sh gen.sh google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12 google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

// The Python stubs of examples/python-objective (protobuf-compiler-grpc
// provides grpc_python_plugin, matching Debian's python3-grpcio 1.51).
//go:generate protoc --python_out=../../examples/python-objective --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin --grpc_python_out=../../examples/python-objective tesbo.proto
