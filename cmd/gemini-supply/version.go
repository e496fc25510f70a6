package main

import (
	"context"
	"fmt"
	"runtime"
)

// version is set at build time: go build -ldflags "-X main.version=0.1.0".
var version = "dev"

var versionCommand = command{
	name:    "version",
	summary: "print the version",
	run:     runVersion,
}

func runVersion(_ context.Context, args []string, s stdio) int {
	fs := newFlagSet("version", "", "Prints the version of gemini-supply and the Go toolchain that built it.")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return exitCode(err)
	}
	fmt.Fprintf(s.out, "gemini-supply %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
