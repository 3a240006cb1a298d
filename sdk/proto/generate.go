// Package proto holds the gRPC protocol between the tesbo host and its
// plugins (tesbo.proto) and the Go code generated from it. Regenerate with
// `go generate ./sdk/proto` after installing Debian's protobuf-compiler
// (protoc 3.21) and the pinned Go plugins:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
//
// The Python stubs of examples/python-objective are generated from the same
// file (see that directory's README).
package proto

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative tesbo.proto

// The Python stubs of examples/python-objective (protobuf-compiler-grpc
// provides grpc_python_plugin, matching Debian's python3-grpcio 1.51).
//go:generate protoc --python_out=../../examples/python-objective --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin --grpc_python_out=../../examples/python-objective tesbo.proto
