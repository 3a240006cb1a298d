# tesbo — common tasks. `make test` is the test command CI runs (.ci/run).

GO ?= go

.PHONY: all build test deps lint race vet fmt bench run

all: build

build:
	$(GO) build ./...

# deps installs what tests need on a fresh machine (apt, Go modules, npm).
deps:
	./scripts/deps.sh

# testprogress prints go test's line for each package as it finishes (and
# the output of failed tests), says which packages are still running every
# minute, and exits non-zero when anything failed.
test: deps lint race
	$(GO) test -count=1 -timeout 20m -json ./... | $(GO) run ./internal/testprogress

# race runs, under the race detector, the tests where goroutines share
# state: the stores and the web view whole, and host's evaluation pool,
# engine, leases, workers and Ask/Tell (RACE_HOST). The whole of ./host
# passes under -race too but takes 13 minutes on 2 cores, these 1.5.
RACE_HOST = TestRunEngine|TestWorker|TestAsyncTES|TestRunWorker|TestSecondHolder|TestConcurrentOpen|TestTakeover|TestLeaseLost|TestHeartbeat|TestRunSurvives|TestAttach|TestEnqueue|TestAskTell|TestOpenOrCreate|TestFailuresRetries|TestRetryRecovers|TestAllFailed|TestProposerFailure|TestCancelGrace|TestEvalLimit

race:
	$(GO) test -race -count=1 -timeout 10m ./store/... ./serve/...
	$(GO) test -race -count=1 -timeout 10m -run '$(RACE_HOST)' ./host

vet:
	$(GO) vet ./...

# lint fails on any finding of go vet, staticcheck or deadcode, or when
# more than 15 % of the library packages' exported names are used by no
# other package (internal/apiuse; -v lists them). The two
# tools are pinned and installed into ./bin (ignored by git), so every
# machine and CI run the same versions. deadcode exits 0 even when it
# reports, so its output is what fails the build. Neither tool reports on
# the generated sdk/proto/*.pb.go, so nothing is excluded.
STATICCHECK_VERSION = v0.8.2
DEADCODE_VERSION = v0.52.0
LINTBIN = $(CURDIR)/bin

lint:
	GOBIN=$(LINTBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	GOBIN=$(LINTBIN) $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)
	$(GO) vet ./...
	$(LINTBIN)/staticcheck ./...
	@out=$$($(LINTBIN)/deadcode -test ./...) || exit 1; \
	if [ -n "$$out" ]; then echo "$$out"; echo "deadcode: unreachable functions above; delete them" >&2; exit 1; fi
	$(GO) run ./internal/apiuse -max 15

fmt:
	gofmt -l -w $$(git ls-files '*.go')

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

run:
	$(GO) run ./cmd/tesbo-host run --objective synthetic/branin --acq tes-ep --iters 30
