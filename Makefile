# Every target that needs the browser, the broker or the Playwright driver runs
# scripts/setup.sh first (idempotent: a second run does no network work) and
# takes the environment it prints.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
GO ?= go
VERSION := $(shell sed -n 's/^## \[\([0-9][^]]*\)\].*/\1/p' CHANGELOG.md | head -n1)
LDFLAGS := -X main.version=$(VERSION)
SETUP := eval "$$(bash scripts/setup.sh)"

.PHONY: all build demo test bench stress lint setup clean panel-screenshots

all: build

setup:
	@bash scripts/setup.sh >/dev/null

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/gemini-supply ./cmd/gemini-supply

## demo: shop an example list in the embedded demo store with the scripted model (offline)
demo: build
	@$(SETUP); ./bin/gemini-supply demo

## lint: go vet + gofmt
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## test: everything, with the race detector; prints go test's ok/FAIL lines and failures,
## then "make test: N packages ok in M s", the suite's CPU by package and the 10 slowest tests
## (scripts/testsummary). Every test binary runs under scripts/reap, which logs the CPU of the
## binary and of everything it started (Chromium, the driver) to bin/test-cpu.log.
## The three longest packages start first, then the ones that mostly wait (Telegram's and the
## agent's timeouts) beside them, then the rest by length, every other package after them (measured:
## docs/testing.md, "Round four"); one test binary more than there are cores runs at a time, so a
## binary waiting on Chromium or a fake leaves no core idle.
TEST_FIRST := ./internal/app ./internal/browser ./cmd/gemini-supply ./internal/telegram \
  ./internal/agent ./internal/shoppinglist ./internal/eval ./internal/homeassistant ./internal/panel \
  ./internal/scripted ./internal/demostore
TEST_P ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
test: lint
	@$(GO) build -o bin/testsummary ./scripts/testsummary
	@$(GO) build -o bin/reap ./scripts/reap
	@rm -f bin/test-cpu.log
	@$(SETUP); REAP_LOG="$(CURDIR)/bin/test-cpu.log" REAP_GRACE=30s \
	  $(GO) test -race -count=1 -p $(TEST_P) -exec "$(CURDIR)/bin/reap" -timeout 50m -json $(TEST_FIRST) ./... \
	  | tee bin/test-events.json | bin/testsummary -cpu bin/test-cpu.log

## bench: benchmarks (speed and memory are shown here, never asserted in tests)
bench:
	@$(SETUP); $(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

## stress: the bench list shopped STRESS_RUNS times (default 5) at 4 tabs with two CPU hogs;
## prints "stress: R runs × 12 items at 4 tabs under load: …" and fails on any failed item,
## spurious re-login or unreported cart unit (STRESS_DIR=dir keeps logs, journals and traces)
STRESS_RUNS ?= 5
STRESS_TABS ?= 4
stress:
	@$(SETUP); GEMINI_SUPPLY_STRESS_RUNS=$(STRESS_RUNS) GEMINI_SUPPLY_STRESS_TABS=$(STRESS_TABS) GEMINI_SUPPLY_STRESS_DIR=$(STRESS_DIR) \
	  $(GO) test -count=1 -v -run '^TestStress$$' -timeout 120m ./internal/app | grep -v -e '^=== RUN' -e '^--- PASS' -e '^PASS$$'

## panel-screenshots: the panel's screenshots in DOCS.md, from a real run of the demo store, in English and French
panel-screenshots:
	@mkdir -p docs/images
	@$(SETUP); GEMINI_SUPPLY_PANEL_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^TestPanelInChromiumDuringServe$$' ./cmd/gemini-supply
	@$(SETUP); GEMINI_SUPPLY_LANGUAGE=fr GEMINI_SUPPLY_PANEL_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^TestPanelInChromiumDuringServe$$' ./cmd/gemini-supply

clean:
	rm -rf bin
