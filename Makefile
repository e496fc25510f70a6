# Every target that needs the browser, the broker or the Playwright driver runs
# scripts/setup.sh first (idempotent: a second run does no network work) and
# takes the environment it prints.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
GO ?= go
VERSION := $(shell sed -n 's/^## \[\([0-9][^]]*\)\].*/\1/p' CHANGELOG.md | head -n1)
LDFLAGS := -X main.version=$(VERSION)
SETUP := eval "$$(bash scripts/setup.sh)"

.PHONY: all build demo test bench lint setup clean panel-screenshots

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

## test: everything, with the race detector
test: lint
	@$(SETUP); $(GO) test -race -count=1 -timeout 30m ./...

## bench: benchmarks (speed and memory are shown here, never asserted in tests)
bench:
	@$(SETUP); $(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

## panel-screenshots: the panel's screenshots in DOCS.md, from a real run of the demo store
panel-screenshots:
	@mkdir -p docs/images
	@$(SETUP); GEMINI_SUPPLY_PANEL_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^TestPanelInChromiumDuringServe$$' ./cmd/gemini-supply

clean:
	rm -rf bin
