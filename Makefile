# tesbo — common tasks. `make test` is the test command CI runs (.ci/run).

GO ?= go

.PHONY: all build test deps vet fmt bench run

all: build

build:
	$(GO) build ./...

# deps installs what tests need on a fresh machine (apt, Go modules, npm).
deps:
	./scripts/deps.sh

# testprogress prints go test's line for each package as it finishes (and
# the output of failed tests), says which packages are still running every
# minute, and exits non-zero when anything failed.
test: deps
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m -json ./... | $(GO) run ./internal/testprogress

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

run:
	$(GO) run ./cmd/tesbo-host run --objective synthetic/branin --acq tes-ep --iters 30
