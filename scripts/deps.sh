#!/bin/sh
# deps.sh installs what the test suite needs on a fresh Debian machine:
# Debian packages (via apt-get, only when missing), Go modules, and the npm
# packages of the face-recognition sidecar. It is idempotent and quiet when
# everything is present.
set -eu
cd "$(dirname "$0")/.."

# Debian packages the tests read or run.
#   dataset-fashion-mnist  real Fashion-MNIST for plugins/cnn tests
#   python3-grpcio         runs examples/python-objective through the host
#   protobuf-compiler      regenerates sdk/proto (go generate; not needed by tests)
pkgs="dataset-fashion-mnist python3-grpcio"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing Debian packages:$missing" >&2
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
fi

# Go modules.
go mod download

# npm packages of the FRS sidecar (pinned by its package-lock.json).
if [ -f plugins/facerec/frs/package-lock.json ] && [ ! -d plugins/facerec/frs/node_modules ]; then
	echo "deps: npm ci in plugins/facerec/frs" >&2
	(cd plugins/facerec/frs && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
