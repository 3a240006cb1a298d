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
#   nodejs, npm            run the face-recognition sidecar (plugins/facerec/frs)
#   chromium               the headless-browser test of the web view (serve)
#   protobuf-compiler      regenerates sdk/proto (go generate; not needed by tests)
#   postgresql             throwaway clusters for the PostgreSQL store and worker tests
#   gcc, libc6-dev         cgo, which go test -race needs (make race)
pkgs="dataset-fashion-mnist python3-grpcio postgresql chromium gcc libc6-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# Node.js and npm are checked by command, not by Debian package: Node may
# come from elsewhere (NodeSource's nodejs package bundles npm and conflicts
# with Debian's npm), and then nothing is installed. Only a missing command
# is installed from Debian (bookworm: Node 18).
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
	echo "deps: installing Debian packages:$missing" >&2
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
fi

# Go modules.
go mod download

# npm packages of the FRS sidecar, pinned by its package-lock.json. npm ci
# runs when they are missing or out of date: package-lock.json is newer
# than the installed tree's record of itself (node_modules/.package-lock.json),
# or the two disagree on a package's version or integrity (e.g. after a
# checkout that changed the lock file).
frs=plugins/facerec/frs
if [ -f "$frs/package-lock.json" ]; then
	node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
		echo "deps: warning: Node.js $(node --version) is older than the FRS sidecar needs (>= 18)" >&2
	why=""
	if [ ! -f "$frs/node_modules/.package-lock.json" ]; then
		why="not installed"
	elif [ "$frs/package-lock.json" -nt "$frs/node_modules/.package-lock.json" ]; then
		why="package-lock.json is newer than node_modules"
	elif ! (cd "$frs" && node -e '
		// Exit 1 when the installed tree differs from the lock file.
		const want = require("./package-lock.json").packages || {};
		const have = require("./node_modules/.package-lock.json").packages || {};
		const same = (a, b) => a.version === b.version && a.integrity === b.integrity;
		for (const [k, v] of Object.entries(want)) {
			if (k === "") continue; // the project itself
			if (!have[k] ? !v.optional : !same(v, have[k])) process.exit(1);
		}
		for (const k of Object.keys(have)) if (!want[k]) process.exit(1);
	'); then
		why="node_modules differs from package-lock.json"
	fi
	if [ -n "$why" ]; then
		echo "deps: npm ci in $frs ($why)" >&2
		(cd "$frs" && npm ci --no-audit --no-fund --loglevel=error >&2)
	fi
fi
