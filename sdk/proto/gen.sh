#!/bin/sh
# gen.sh PKG@VERSION...: regenerate tesbo.pb.go and tesbo_grpc.pb.go with
# exactly the protoc plugins given (go generate passes the pinned
# protoc-gen-go and protoc-gen-go-grpc), whatever is on PATH. Each is
# installed into a temporary GOBIN (the go command's module cache makes
# reruns fast) and handed to protoc by path. Needs protoc (Debian
# protobuf-compiler, 3.21 for byte-identical output) and the go command.
set -eu
command -v protoc >/dev/null || { echo "gen.sh: protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for pkg in "$@"; do
	GOBIN=$bin go install "$pkg"
done
for tool in protoc-gen-go protoc-gen-go-grpc; do
	[ -x "$bin/$tool" ] || { echo "gen.sh: $tool was not among the pinned plugins: $*" >&2; exit 1; }
done
protoc --plugin=protoc-gen-go="$bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
	--go_out=. --go_opt=paths=source_relative \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative \
	tesbo.proto
